"""A typed, read-only view of the ClusterServiceVersion fields rendering needs.

Parsing decodes the same fields upstream decodes into `v1alpha1.ClusterServiceVersion` and applies
the same Go round trips (see `olm.compat.gotypes`), so values compare and hash exactly as upstream's
do. A wrong JSON type anywhere in those fields is a `CSVError` naming the CSV and the field path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from olm.compat import gotypes, k8stypes

__all__ = [
    "ALL_NAMESPACES",
    "MULTI_NAMESPACE",
    "OWN_NAMESPACE",
    "SINGLE_NAMESPACE",
    "CSVError",
    "ClusterServiceVersion",
    "DeploymentSpec",
    "Permission",
    "WebhookDefinition",
    "parse_csv",
]

OWN_NAMESPACE = "OwnNamespace"
SINGLE_NAMESPACE = "SingleNamespace"
MULTI_NAMESPACE = "MultiNamespace"
ALL_NAMESPACES = "AllNamespaces"

VALIDATING = "ValidatingAdmissionWebhook"
MUTATING = "MutatingAdmissionWebhook"
CONVERSION = "ConversionWebhook"


class CSVError(ValueError):
    """The ClusterServiceVersion cannot be decoded."""


@dataclass(frozen=True)
class Permission:
    """One entry of `permissions` or `clusterPermissions` (StrategyDeploymentPermissions)."""

    service_account_name: str
    rules: tuple[dict[str, Any], ...] | None  # None: absent, which Go encodes as null

    def go_value(self) -> dict[str, Any]:
        """The value as Go encodes it (field order included), for the unique-name hash."""
        rules = None if self.rules is None else list(self.rules)
        return {"serviceAccountName": self.service_account_name, "rules": rules}


@dataclass(frozen=True)
class DeploymentSpec:
    """One `install.spec.deployments` entry; `spec` is the round-tripped apps/v1 DeploymentSpec."""

    name: str
    spec: dict[str, Any]
    label: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class WebhookDefinition:
    """One `webhookdefinitions` entry (WebhookDescription)."""

    type: str
    generate_name: str
    deployment_name: str
    container_port: int
    target_port: int | str | None
    rules: tuple[dict[str, Any], ...]
    failure_policy: str | None
    match_policy: str | None
    object_selector: dict[str, Any] | None
    side_effects: str | None
    timeout_seconds: int | None
    admission_review_versions: tuple[str, ...] | None
    reinvocation_policy: str | None
    webhook_path: str | None
    conversion_crds: tuple[str, ...]


@dataclass(frozen=True)
class ClusterServiceVersion:
    name: str
    version: str
    annotations: dict[str, str]
    install_modes: tuple[tuple[str, bool], ...]
    deployments: tuple[DeploymentSpec, ...]
    permissions: tuple[Permission, ...]
    cluster_permissions: tuple[Permission, ...]
    owned_crds: tuple[str, ...]
    owned_api_services: tuple[dict[str, Any], ...]
    webhook_definitions: tuple[WebhookDefinition, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @property
    def supported_install_modes(self) -> frozenset[str]:
        return frozenset(mode for mode, supported in self.install_modes if supported)


def parse_csv(obj: dict[str, Any]) -> ClusterServiceVersion:
    """Decode a ClusterServiceVersion object (as read from the bundle)."""
    metadata = obj.get("metadata")
    name = str(metadata.get("name") or "") if isinstance(metadata, dict) else ""
    try:
        return _parse(obj, name)
    except gotypes.GoTypeError as err:
        raise CSVError(f"invalid ClusterServiceVersion {name!r}: {err}") from err


def _rt(go_type: gotypes.GoType, value: Any, path: str) -> Any:
    return gotypes.roundtrip(go_type, value if value is not None else gotypes.MISSING, path)


_STR_MAP = gotypes.Map(gotypes.Scalar("string"))
_STR_LIST = gotypes.Slice(gotypes.Scalar("string"))


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise gotypes.GoTypeError(path, "cannot decode into array")
    return value


def _dict(value: Any, path: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise gotypes.GoTypeError(path, "cannot decode into object")
    return value


def _parse(obj: dict[str, Any], name: str) -> ClusterServiceVersion:
    metadata = _dict(obj.get("metadata"), "metadata")
    spec = _dict(obj.get("spec"), "spec")
    install = _dict(_dict(spec.get("install"), "spec.install").get("spec"), "spec.install.spec")
    modes = []
    for i, item in enumerate(_list(spec.get("installModes"), "spec.installModes")):
        mode = _dict(item, f"spec.installModes[{i}]")
        modes.append((str(mode.get("type", "")), bool(mode.get("supported", False))))
    crds = _dict(spec.get("customresourcedefinitions"), "spec.customresourcedefinitions")
    apis = _dict(spec.get("apiservicedefinitions"), "spec.apiservicedefinitions")
    return ClusterServiceVersion(
        name=name,
        version=str(spec.get("version") or ""),
        annotations=_rt(_STR_MAP, metadata.get("annotations"), "metadata.annotations") or {},
        install_modes=tuple(modes),
        deployments=tuple(
            _deployment(d, f"spec.install.spec.deployments[{i}]")
            for i, d in enumerate(_list(install.get("deployments"), "spec.install.spec.deployments"))
        ),
        permissions=_permissions(install.get("permissions"), "spec.install.spec.permissions"),
        cluster_permissions=_permissions(
            install.get("clusterPermissions"), "spec.install.spec.clusterPermissions"
        ),
        owned_crds=tuple(
            str(_dict(c, "owned").get("name", "")) for c in _list(crds.get("owned"), "spec.crds.owned")
        ),
        owned_api_services=tuple(_list(apis.get("owned"), "spec.apiservicedefinitions.owned")),
        webhook_definitions=tuple(
            _webhook(w, f"spec.webhookdefinitions[{i}]")
            for i, w in enumerate(_list(spec.get("webhookdefinitions"), "spec.webhookdefinitions"))
        ),
        raw=obj,
    )


def _permissions(value: Any, path: str) -> tuple[Permission, ...]:
    out = []
    for i, raw in enumerate(_list(value, path)):
        item = _dict(raw, f"{path}[{i}]")
        rules = _rt(gotypes.Slice(k8stypes.POLICY_RULE), item.get("rules"), f"{path}[{i}].rules")
        sa = _rt(gotypes.Scalar("string"), item.get("serviceAccountName"), f"{path}[{i}].serviceAccountName")
        out.append(Permission(sa or "", None if rules is None else tuple(rules)))
    return tuple(out)


def _deployment(value: Any, path: str) -> DeploymentSpec:
    value = _dict(value, path)
    return DeploymentSpec(
        name=_rt(gotypes.Scalar("string"), value.get("name"), f"{path}.name") or "",
        spec=_rt(k8stypes.DEPLOYMENT_SPEC, value.get("spec"), f"{path}.spec"),
        label=_rt(_STR_MAP, value.get("label"), f"{path}.label") or {},
    )


def _opt(go_type: gotypes.GoType, value: Any, path: str) -> Any:
    return None if value is None else gotypes.roundtrip(go_type, value, path)


def _webhook(value: Any, path: str) -> WebhookDefinition:
    v = _dict(value, path)
    s, i = gotypes.Scalar("string"), gotypes.Scalar("int")
    versions = _opt(_STR_LIST, v.get("admissionReviewVersions"), f"{path}.admissionReviewVersions")
    return WebhookDefinition(
        type=_rt(s, v.get("type"), f"{path}.type") or "",
        generate_name=_rt(s, v.get("generateName"), f"{path}.generateName") or "",
        deployment_name=_rt(s, v.get("deploymentName"), f"{path}.deploymentName") or "",
        container_port=_rt(i, v.get("containerPort"), f"{path}.containerPort") or 0,
        target_port=_opt(gotypes.IntOrString(), v.get("targetPort"), f"{path}.targetPort"),
        rules=tuple(_rt(gotypes.Slice(k8stypes.RULE_WITH_OPERATIONS), v.get("rules"), f"{path}.rules") or ()),
        failure_policy=_opt(s, v.get("failurePolicy"), f"{path}.failurePolicy"),
        match_policy=_opt(s, v.get("matchPolicy"), f"{path}.matchPolicy"),
        object_selector=_opt(k8stypes.LABEL_SELECTOR, v.get("objectSelector"), f"{path}.objectSelector"),
        side_effects=_opt(s, v.get("sideEffects"), f"{path}.sideEffects"),
        timeout_seconds=_opt(i, v.get("timeoutSeconds"), f"{path}.timeoutSeconds"),
        admission_review_versions=tuple(versions) if versions is not None else None,
        reinvocation_policy=_opt(s, v.get("reinvocationPolicy"), f"{path}.reinvocationPolicy"),
        webhook_path=_opt(s, v.get("webhookPath"), f"{path}.webhookPath"),
        conversion_crds=tuple(_rt(_STR_LIST, v.get("conversionCRDs"), f"{path}.conversionCRDs") or ()),
    )
