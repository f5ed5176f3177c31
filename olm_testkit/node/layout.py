"""A real node's name and where it keeps each file under its state directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from olm_testkit.nodenet import NodeNetwork


def node_name(index: int) -> str:
    return f"real-node-{index}"


def node_cgroup(index: int) -> str:
    """The cgroup (in every hierarchy) that holds every Pod of node `index`."""
    return f"olm-node-{index}"


@dataclass(frozen=True)
class NodeLayout:
    state_dir: Path
    """Configuration, certificates, containerd's store, the kubelet's root, logs and pids."""
    network: NodeNetwork

    @property
    def name(self) -> str:
        return node_name(self.network.index)

    @property
    def cgroup_parent(self) -> str:
        return node_cgroup(self.network.index)

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    def log_file(self, component: str) -> Path:
        return self.logs_dir / f"{component}.log"

    @property
    def state_file(self) -> Path:
        """The pids of the node's processes, for `down` from another process and for reuse."""
        return self.state_dir / "state.json"

    @property
    def containerd_dir(self) -> Path:
        return self.state_dir / "containerd"

    @property
    def containerd_socket(self) -> Path:
        return self.containerd_dir / "containerd.sock"

    @property
    def containerd_config(self) -> Path:
        return self.containerd_dir / "config.toml"

    @property
    def registry_hosts_dir(self) -> Path:
        """containerd's per-registry configuration (`<registry>/hosts.toml`): mirrors."""
        return self.containerd_dir / "certs.d"

    @property
    def ca_bundle(self) -> Path:
        """The system's CAs and the cluster's, which containerd trusts for every registry."""
        return self.containerd_dir / "ca-bundle.crt"

    @property
    def cni_conf_dir(self) -> Path:
        return self.state_dir / "net.d"

    @property
    def kubelet_config(self) -> Path:
        return self.state_dir / "kubelet-config.yaml"

    @property
    def kubelet_kubeconfig(self) -> Path:
        return self.state_dir / "kubelet.kubeconfig"

    @property
    def kubelet_root(self) -> Path:
        return self.state_dir / "kubelet"

    @property
    def kube_proxy_config(self) -> Path:
        return self.state_dir / "kube-proxy.yaml"

    @property
    def kube_proxy_kubeconfig(self) -> Path:
        return self.state_dir / "kube-proxy.kubeconfig"

    @property
    def corefile(self) -> Path:
        return self.state_dir / "Corefile"

    @property
    def resolv_conf(self) -> Path:
        """Empty: Pods get only the cluster's DNS, nothing of the host's resolver configuration."""
        return self.state_dir / "resolv.conf"

    @property
    def pod_logs_dir(self) -> Path:
        return self.state_dir / "pod-logs"

    @property
    def sandbox_archive(self) -> Path:
        return self.state_dir / "pause.oci.tar"
