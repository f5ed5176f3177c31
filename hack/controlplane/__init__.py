"""Builds the pinned control-plane binaries and runs them on loopback (see `python -m hack.controlplane`).

The processes themselves are started by `olm_runtime.testing.controlplane`, which ships with the
runtime so that teams embedding it can run the same control plane in their own tests; this package
adds what only this repository has: the Go wrapper modules that pin the versions and build them.
"""
