"""CRD generator: `olm.api` models -> `manifests/crds/*.yaml`.

`schema` turns a model's pydantic JSON schema into a Kubernetes structural schema, `structural`
checks the result the way the API server will, `crd` wraps it into a CustomResourceDefinition and
renders deterministic YAML, and `__main__` writes the files or, with `--check`, fails when the files
on disk are stale. Generated files are never edited by hand.
"""
