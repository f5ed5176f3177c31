"""CRD generation: `olm.api` models -> CustomResourceDefinitions.

`schema` turns a model's pydantic JSON schema into a Kubernetes structural schema, `structural`
checks the result the way the API server will, and `crd` wraps it into a CustomResourceDefinition
and renders deterministic YAML. `python -m hack.crdgen` writes them to `manifests/crds/` (or, with
`--check`, fails when the files on disk are stale); generated files are never edited by hand.
"""
