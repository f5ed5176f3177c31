"""olm_runtime: a controller-runtime-style framework for Kubernetes controllers on asyncio.

It knows nothing about OLM; `olm` builds on it, never the other way round. The test kit in
`olm_runtime.testing` runs a real control plane and registry for embedders' tests.
"""
