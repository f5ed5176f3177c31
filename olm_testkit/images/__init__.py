"""Build OCI images from directories and push them to a registry with the distribution HTTP API.

Two shapes are built: File-Based Catalog images (the catalog under `/configs`, labelled
`operators.operatorframework.io.index.configs.v1=/configs`) and registry+v1 bundle images
(`manifests/` and `metadata/` at the root, labelled with the `operators.operatorframework.io.bundle.*`
annotations from `metadata/annotations.yaml`). Layers are reproducible: the same directory always
gives the same digest.
"""
