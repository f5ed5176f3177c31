"""OLM's binaries and the local control plane `make run` and `make cluster-up` use (see
`python -m hack.controlplane`).

The control plane itself, its pinned versions and the machinery that builds binaries from pinned Go
modules ship with the runtime (`olm_runtime.testing`), so that teams embedding it run the same control
plane in their own tests; this package adds what only this repository needs: the real node's, the
cert-manager's and the test tools' wrapper modules, built with that machinery (`build`).
"""
