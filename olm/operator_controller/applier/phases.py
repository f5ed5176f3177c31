"""The order in which a revision's objects roll out: thirteen phases keyed by GroupKind.

The table is data (`PHASES`); `phase_of` looks an object's GroupKind up and sends every kind the
table does not name to `deploy`, so custom resources a bundle ships roll out after the CRDs,
RBAC and Services they need. cert-manager's Issuer and Certificate are in `infrastructure`, where
upstream's code puts them (its documentation places Certificate in `deploy`): the Certificate must
exist before the Deployments that mount its Secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

__all__ = ["DEFAULT_PHASE", "PHASES", "GroupKind", "Phase", "group_kind", "phase_of", "sort_into_phases"]


@dataclass(frozen=True, order=True)
class GroupKind:
    """An API group (empty for the core group) and a kind."""

    group: str
    kind: str

    def __str__(self) -> str:
        return f"{self.kind}.{self.group}" if self.group else self.kind


@dataclass(frozen=True)
class Phase:
    """One named phase and the GroupKinds it holds."""

    name: str
    kinds: frozenset[GroupKind]


def _phase(name: str, *kinds: tuple[str, str]) -> Phase:
    return Phase(name, frozenset(GroupKind(group, kind) for group, kind in kinds))


_CORE = ""
_RBAC = "rbac.authorization.k8s.io"
_CERT_MANAGER = "cert-manager.io"
_MONITORING = "monitoring.coreos.com"
_CONSOLE = "console.openshift.io"
_ADMISSION = "admissionregistration.k8s.io"

PHASES: Final[tuple[Phase, ...]] = (
    _phase("namespaces", (_CORE, "Namespace")),
    _phase(
        "policies",
        ("networking.k8s.io", "NetworkPolicy"),
        ("policy", "PodDisruptionBudget"),
        ("scheduling.k8s.io", "PriorityClass"),
    ),
    _phase("identity", (_CORE, "ServiceAccount")),
    _phase("configuration", (_CORE, "Secret"), (_CORE, "ConfigMap")),
    _phase(
        "storage",
        (_CORE, "PersistentVolume"),
        (_CORE, "PersistentVolumeClaim"),
        ("storage.k8s.io", "StorageClass"),
    ),
    _phase("crds", ("apiextensions.k8s.io", "CustomResourceDefinition")),
    _phase("roles", (_RBAC, "ClusterRole"), (_RBAC, "Role")),
    _phase("bindings", (_RBAC, "ClusterRoleBinding"), (_RBAC, "RoleBinding")),
    _phase("infrastructure", (_CORE, "Service"), (_CERT_MANAGER, "Issuer"), (_CERT_MANAGER, "Certificate")),
    _phase("deploy", ("apps", "Deployment")),
    _phase("scaling", ("autoscaling.k8s.io", "VerticalPodAutoscaler")),
    _phase(
        "publish",
        (_MONITORING, "PrometheusRule"),
        (_MONITORING, "ServiceMonitor"),
        (_MONITORING, "PodMonitor"),
        ("networking.k8s.io", "Ingress"),
        ("route.openshift.io", "Route"),
        (_CONSOLE, "ConsoleYAMLSample"),
        (_CONSOLE, "ConsoleQuickStart"),
        (_CONSOLE, "ConsoleCLIDownload"),
        (_CONSOLE, "ConsoleLink"),
        (_CONSOLE, "ConsolePlugin"),
    ),
    _phase(
        "admission",
        (_ADMISSION, "ValidatingWebhookConfiguration"),
        (_ADMISSION, "MutatingWebhookConfiguration"),
    ),
)
"""The phases in rollout order."""

DEFAULT_PHASE: Final = "deploy"
"""Where every GroupKind the table does not name goes."""

_BY_KIND: Final[dict[GroupKind, str]] = {kind: phase.name for phase in PHASES for kind in phase.kinds}
_ORDER: Final[dict[str, int]] = {phase.name: index for index, phase in enumerate(PHASES)}


def group_kind(obj: Mapping[str, Any]) -> GroupKind:
    """The GroupKind of a manifest (`apiVersion` `group/version` or just `version` for core)."""
    api_version = str(obj.get("apiVersion", ""))
    group = api_version.rpartition("/")[0]
    return GroupKind(group, str(obj.get("kind", "")))


def phase_of(obj: Mapping[str, Any]) -> str:
    """The name of the phase `obj` belongs to."""
    return _BY_KIND.get(group_kind(obj), DEFAULT_PHASE)


def _object_order(obj: Mapping[str, Any]) -> tuple[str, str, str, str, str, bytes]:
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    metadata = obj.get("metadata") or {}
    return (
        group,
        version,
        str(obj.get("kind", "")),
        metadata.get("namespace") or "",
        metadata.get("name") or "",
        # Two objects of one identity (a broken bundle) still sort the same whatever the input order.
        orjson.dumps(obj, option=orjson.OPT_SORT_KEYS),
    )


def sort_into_phases(objects: Iterable[Mapping[str, Any]]) -> list[tuple[str, list[Mapping[str, Any]]]]:
    """`(phase name, objects)` in rollout order; empty phases left out; within a phase objects are
    sorted by group, version, kind, namespace and name, so the result does not depend on input order."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        grouped.setdefault(phase_of(obj), []).append(obj)
    return [
        (name, sorted(grouped[name], key=_object_order)) for name in sorted(grouped, key=_ORDER.__getitem__)
    ]
