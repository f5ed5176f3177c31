"""Test kit for controllers built on olm_runtime: a real local control plane and OCI registry.

- `controlplane.ControlPlane`: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
  on loopback, with TLS, RBAC + Node authorization, ServiceAccount tokens and admission webhooks.
- `binaries`: those programs at the versions pinned in this package (`gomod/`), built from the Go
  module proxy into a cache on first use, or found there (`python -m olm_runtime.testing binaries`).
- `registry.Registry`: the distribution registry over TLS.
- `pki.CertificateAuthority`: certificates for webhook servers and the like.
- `poll.eventually`: wait for a condition, with a deadline, instead of sleeping.
- `settle`: wait until the API server acts on configuration just written (a webhook configuration,
  a CRD, RBAC), which it applies through caches of its own a moment later.
- `pytest_plugin`: session-scoped fixtures `control_plane_binaries`, `control_plane_address`,
  `control_plane`, `registry`, `api_client`, and per-test `admin_client` (an
  `olm_runtime.client.Client`) and `namespace`.
- `python -m olm_runtime.testing binaries|up|down|status`: the same control plane from a shell.
"""
