"""Target (watched) namespaces: the default for a bundle, and the check against its install modes.

`[""]` means all namespaces (AllNamespaces); `[install namespace]` is OwnNamespace; one other
namespace is SingleNamespace; several are MultiNamespace. Messages are upstream's.
"""

from __future__ import annotations

from collections.abc import Sequence

from olm.pipeline.render._errors import InvalidConfigurationError
from olm.registryv1.clusterserviceversion import (
    ALL_NAMESPACES,
    MULTI_NAMESPACE,
    OWN_NAMESPACE,
    SINGLE_NAMESPACE,
    ClusterServiceVersion,
)

__all__ = ["default_target_namespaces", "go_list", "validate_target_namespaces"]


def go_list(items: Sequence[str]) -> str:
    """A string slice as Go's %v prints it: `[a b]`."""
    return "[" + " ".join(items) + "]"


def default_target_namespaces(csv: ClusterServiceVersion) -> tuple[str, ...]:
    """All namespaces when the bundle supports AllNamespaces, otherwise none (the user must choose)."""
    return ("",) if ALL_NAMESPACES in csv.supported_install_modes else ()


def validate_target_namespaces(
    csv: ClusterServiceVersion, install_namespace: str, targets: Sequence[str]
) -> None:
    """Raise InvalidConfigurationError when the bundle's install modes do not allow `targets`."""
    reason = _check(csv.supported_install_modes, install_namespace, list(targets))
    if reason is not None:
        raise InvalidConfigurationError(
            f"invalid option(s): invalid target namespaces {go_list(list(targets))}: {reason}"
        )


def _check(modes: frozenset[str], install_namespace: str, targets: list[str]) -> str | None:
    unique = set(targets)
    supported = go_list(sorted(modes))
    if not unique:
        if MULTI_NAMESPACE in modes:
            return "at least one target namespace must be specified"
        return "exactly one target namespace must be specified"
    if unique == {""}:
        if ALL_NAMESPACES in modes:
            return None
        return f"supported install modes {supported} do not support targeting all namespaces"
    if len(unique) == 1:
        if targets[0] == install_namespace:
            if OWN_NAMESPACE not in modes:
                return f"supported install modes {supported} do not support targeting own namespace"
            return None
        if SINGLE_NAMESPACE in modes:
            return None
    else:
        if OWN_NAMESPACE not in modes and install_namespace in unique:
            return f"supported install modes {supported} do not support targeting own namespace"
        if MULTI_NAMESPACE in modes and "" not in unique:
            return None
    return f"supported install modes {supported} do not support target namespaces {go_list(targets)}"
