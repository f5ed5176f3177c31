"""The kinds a registry+v1 bundle may carry besides its CSV, and whether each is namespaced.

The table is operator-registry's (`pkg/lib/bundle/supported_resources.go`, v1.73.0), which upstream
OLM uses both to refuse other kinds and to decide which objects move into the install namespace.
"""

from __future__ import annotations

__all__ = ["SUPPORTED_KINDS", "is_supported"]

SUPPORTED_KINDS: dict[str, bool] = {
    "ClusterServiceVersion": True,
    "CustomResourceDefinition": False,
    "ClusterRole": False,
    "ClusterRoleBinding": False,
    "Service": True,
    "ServiceAccount": True,
    "Role": True,
    "RoleBinding": True,
    "PrometheusRule": True,
    "ServiceMonitor": True,
    "PodMonitor": True,
    "Secret": True,
    "ConfigMap": True,
    "PodDisruptionBudget": True,
    "NetworkPolicy": True,
    "PriorityClass": False,
    # Namespaced in Kubernetes, but the table marks it cluster-scoped; kept for parity.
    "VerticalPodAutoscaler": False,
    "ConsoleYAMLSample": False,
    "ConsoleQuickStart": False,
    "ConsoleCLIDownload": False,
    "ConsoleLink": False,
    "ConsolePlugin": False,
}


def is_supported(kind: str) -> tuple[bool, bool]:
    """(supported, namespaced) for a kind."""
    namespaced = SUPPORTED_KINDS.get(kind)
    return namespaced is not None, bool(namespaced)
