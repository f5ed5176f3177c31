"""Deploy OLM into a cluster from `manifests/` exactly as shipped: the kustomizations, with an overlay
that only sets the image (`kustomize`), applied and waited for (`install`)."""
