"""Command lines of the control-plane components: what each runs with and why."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SERVICE_CIDR = "10.0.0.0/24"
KWOK_POD_CIDR = "10.244.0.0/16"
"""The addresses kwok gives Pods on its simulated nodes: nothing answers there."""
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"


@dataclass(frozen=True, kw_only=True)
class Layout:
    binary_dir: Path
    state_dir: Path
    pki_dir: Path
    kubeconfig: Path
    ports: dict[str, int]
    address: str = "127.0.0.1"
    """Where the API server listens and what it advertises (the `kubernetes` Service's endpoint)."""


def command(name: str, layout: Layout, *, apiserver_args: tuple[str, ...] = ()) -> list[str]:
    binary = str(layout.binary_dir / name)
    if name == "etcd":
        return [binary, *_etcd(layout)]
    if name == "kube-apiserver":
        return [binary, *_apiserver(layout), *apiserver_args]
    if name == "kube-controller-manager":
        return [binary, *_delegated(name, layout), *_controller_manager(layout)]
    if name == "kube-scheduler":
        return [binary, *_delegated(name, layout)]
    if name == "kwok":
        return [binary, *_kwok(layout)]
    raise ValueError(f"unknown component {name!r}")


def etcd_url(layout: Layout) -> str:
    return f"http://127.0.0.1:{layout.ports['etcd']}"


def _etcd(layout: Layout) -> list[str]:
    client, peer = etcd_url(layout), f"http://127.0.0.1:{layout.ports['etcd-peer']}"
    return [
        "--name=default",
        f"--data-dir={layout.state_dir / 'etcd'}",
        f"--listen-client-urls={client}",
        f"--advertise-client-urls={client}",
        f"--listen-peer-urls={peer}",
        f"--initial-advertise-peer-urls={peer}",
        f"--initial-cluster=default={peer}",
        # Test data is disposable: skipping fsync makes writes an order of magnitude faster.
        "--unsafe-no-fsync",
        "--log-level=warn",
    ]


def _apiserver(layout: Layout) -> list[str]:
    pki = layout.pki_dir
    return [
        f"--etcd-servers={etcd_url(layout)}",
        f"--bind-address={layout.address}",
        f"--advertise-address={layout.address}",
        f"--secure-port={layout.ports['kube-apiserver']}",
        f"--cert-dir={pki}",
        f"--tls-cert-file={pki / 'apiserver.crt'}",
        f"--tls-private-key-file={pki / 'apiserver.key'}",
        f"--client-ca-file={pki / 'ca.crt'}",
        "--authorization-mode=Node,RBAC",
        f"--service-cluster-ip-range={SERVICE_CIDR}",
        # ServiceAccount tokens: the API server signs them (TokenRequest) and verifies them.
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        f"--service-account-key-file={pki / 'sa.pub'}",
        f"--service-account-signing-key-file={pki / 'sa.key'}",
        # Logs, exec and port-forward of Pods on real nodes: the API server authenticates to each
        # kubelet with a client certificate and checks the kubelet's serving certificate.
        f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
        f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
        f"--kubelet-certificate-authority={pki / 'ca.crt'}",
        "--kubelet-preferred-address-types=InternalIP",
        # Webhooks and aggregated APIs are called at their endpoints' Pod IPs, which this host
        # routes to the real node; a Service's cluster IP means nothing outside a node.
        "--enable-aggregator-routing=true",
        # Added to the default plugins, which already call mutating and validating webhooks.
        # PodNodeSelector and PodTolerationRestriction let a namespace's annotations place its Pods
        # (the local cluster keeps OLM's own Pods on the real node, extension workloads on kwok).
        # OwnerReferencesPermissionEnforcement, as hardened clusters (OpenShift among them) run it:
        # an ownerReference with blockOwnerDeletion needs `update` on the owner's `finalizers`, so
        # tests find a controller or installer that lacks that grant.
        "--enable-admission-plugins=NodeRestriction,PodNodeSelector,PodTolerationRestriction,"
        "OwnerReferencesPermissionEnforcement",
        "--allow-privileged=true",
        "--profiling=false",
        "--v=1",
    ]


def _delegated(name: str, layout: Layout) -> list[str]:
    """Flags shared by the controller-manager and scheduler: admin credentials, loopback, no election."""
    kubeconfig = str(layout.kubeconfig)
    return [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--bind-address=127.0.0.1",
        f"--secure-port={layout.ports[name]}",
        "--leader-elect=false",
        "--v=1",
    ]


def _controller_manager(layout: Layout) -> list[str]:
    pki = layout.pki_dir
    return [
        f"--root-ca-file={pki / 'ca.crt'}",
        f"--service-account-private-key-file={pki / 'sa.key'}",
        f"--cluster-signing-cert-file={pki / 'ca.crt'}",
        f"--cluster-signing-key-file={pki / 'ca.key'}",
        "--controllers=*",
        "--use-service-account-credentials=false",
        # Tests create and delete much at once; more workers keep GC and rollouts prompt.
        "--concurrent-gc-syncs=10",
        "--concurrent-deployment-syncs=10",
    ]


def _kwok(layout: Layout) -> list[str]:
    return [
        f"--kubeconfig={layout.kubeconfig}",
        f"--config={layout.binary_dir / 'kwok-stages.yaml'}",
        f"--manage-nodes-with-annotation-selector={KWOK_NODE_ANNOTATION}=fake",
        "--node-lease-duration-seconds=40",
        f"--cidr={KWOK_POD_CIDR}",
        "--node-ip=127.0.0.1",
        f"--server-address=127.0.0.1:{layout.ports['kwok']}",
    ]
