"""kube-proxy in iptables mode, inside the node's network namespace: its rules are the namespace's,
never the host's. It leaves the kernel's conntrack settings alone (sysctls this VM may refuse)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from olm_testkit.node.layout import NodeLayout
from olm_testkit.nodenet import POD_CIDRS, NodeNetwork


def config(layout: NodeLayout) -> dict[str, Any]:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "clientConnection": {"kubeconfig": str(layout.kube_proxy_kubeconfig)},
        "mode": "iptables",
        # Every node's Pods: Service traffic from a Pod to a Pod on another node keeps its source
        # address (only traffic from outside the cluster's Pods is masqueraded).
        "clusterCIDR": POD_CIDRS,
        "hostnameOverride": layout.name,
        "bindAddress": layout.network.node_ip,
        "healthzBindAddress": "127.0.0.1:10256",
        "metricsBindAddress": "127.0.0.1:10249",
        # Zero leaves the kernel's conntrack settings alone.
        "conntrack": {
            "maxPerCore": 0,
            "min": 0,
            "tcpEstablishedTimeout": "0s",
            "tcpCloseWaitTimeout": "0s",
        },
    }


def args(layout: NodeLayout, binary_dir: Path) -> list[str]:
    return [str(binary_dir / "kube-proxy"), f"--config={layout.kube_proxy_config}"]


def service_rules_written(network: NodeNetwork) -> bool:
    """Whether kube-proxy has written the rules of the `kubernetes` Service."""
    result = subprocess.run(
        network.enter(["iptables", "-t", "nat", "-S", "KUBE-SERVICES"]),
        capture_output=True,
        text=True,
        check=False,
    )
    return "default/kubernetes:https" in result.stdout
