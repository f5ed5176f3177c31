"""The kubelet's configuration and command line.

What this kind of VM needs: cgroups v1 (`failCgroupV1: false`, the cgroupfs driver) and an explicit
node IP (`kubectl logs` failed resolving the node's name). The node registers with the placement
taint and label (`placement`), keeps its Pods in a cgroup of its own and, on a busy test machine,
evicts nothing for disk or memory pressure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olm_testkit.node.coredns import CLUSTER_DOMAIN
from olm_testkit.node.layout import NodeLayout
from olm_testkit.node.placement import NODE_LABEL, TAINT_KEY


def config(layout: NodeLayout, *, ca_file: Path, serving_cert: Path, serving_key: Path) -> dict[str, Any]:
    node_ip = layout.network.node_ip
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": node_ip,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(ca_file)},
        },
        "authorization": {"mode": "Webhook"},
        "tlsCertFile": str(serving_cert),
        "tlsPrivateKeyFile": str(serving_key),
        "cgroupDriver": "cgroupfs",
        "cgroupRoot": f"/{layout.cgroup_parent}",
        "failCgroupV1": False,
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{layout.containerd_socket}",
        "clusterDNS": [node_ip],
        "clusterDomain": CLUSTER_DOMAIN,
        "resolvConf": str(layout.resolv_conf),
        "podLogsDir": str(layout.pod_logs_dir),
        "enforceNodeAllocatable": [],
        # A busy test machine must not evict OLM's Pods for disk or memory pressure.
        "evictionHard": {"memory.available": "0%", "nodefs.available": "0%", "imagefs.available": "0%"},
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "registerWithTaints": [{"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}],
        "syncFrequency": "10s",
        "fileCheckFrequency": "0s",
    }


def args(layout: NodeLayout, binary_dir: Path) -> list[str]:
    return [
        str(binary_dir / "kubelet"),
        f"--config={layout.kubelet_config}",
        f"--kubeconfig={layout.kubelet_kubeconfig}",
        f"--hostname-override={layout.name}",
        f"--node-ip={layout.network.node_ip}",
        f"--root-dir={layout.kubelet_root}",
        f"--cert-dir={layout.kubelet_root / 'pki'}",
        f"--node-labels={NODE_LABEL}=real",
        "--v=1",
    ]
