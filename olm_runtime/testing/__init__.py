"""Test kit for controllers built on olm_runtime: a real local control plane and OCI registry.

- `controlplane.ControlPlane`: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok
  on loopback, with TLS, RBAC + Node authorization, ServiceAccount tokens and admission webhooks.
- `registry.Registry`: the distribution registry over TLS.
- `pki.CertificateAuthority`: certificates for webhook servers and the like.
- `settle`: wait until the API server acts on configuration just written (a webhook configuration,
  a CRD, RBAC), which it applies through caches of its own a moment later.
- `pytest_plugin`: session-scoped fixtures `control_plane`, `registry`, `api_client`, and per-test
  `admin_client` (an `olm_runtime.client.Client`) and `namespace`.
"""
