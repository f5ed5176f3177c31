"""The node's certificates, issued by the control plane's CA, and the kubeconfigs that carry them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from olm_runtime.testing.pki import CertificateAuthority, KeyPair
from olm_testkit.node.layout import NodeLayout


@dataclass(frozen=True)
class NodeCredentials:
    kubelet: KeyPair
    """The kubelet's client identity, `system:node:<name>` in `system:nodes` (Node authorization)."""
    serving: KeyPair
    """The kubelet's serving certificate, for the node's name and address."""
    proxy: KeyPair
    """kube-proxy's client identity, `system:kube-proxy`."""


def issue(ca: CertificateAuthority, layout: NodeLayout) -> NodeCredentials:
    name, ip = layout.name, layout.network.node_ip
    return NodeCredentials(
        kubelet=ca.issue(
            f"{name}-kubelet", common_name=f"system:node:{name}", organizations=["system:nodes"], client=True
        ),
        serving=ca.issue(f"{name}-kubelet-serving", common_name=name, hosts=[ip, name]),
        proxy=ca.issue(f"{name}-kube-proxy", common_name="system:kube-proxy", client=True),
    )


def write_kubeconfig(path: Path, *, server: str, ca_file: Path, user: str, identity: KeyPair) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "local", "cluster": {"server": server, "certificate-authority": str(ca_file)}}],
        "users": [
            {
                "name": user,
                "user": {"client-certificate": str(identity.cert_file), "client-key": str(identity.key_file)},
            }
        ],
        "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
        "current-context": "local",
    }
    path.write_text(json.dumps(config, indent=2))
    path.chmod(0o600)
    return path
