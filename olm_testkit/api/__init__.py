"""Inputs for the API's tests: the ClusterExtension and ClusterCatalog examples of the spec documents,
and the version strings the CRD's rules must accept or refuse. Both the unit tests (the models, the
pydantic-free spec reader) and the e2e tests (the real API server) read them."""
