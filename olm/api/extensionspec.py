"""What operator-controller reads of a ClusterExtension's spec, without the API models.

The API server has already validated the object against the CRD generated from
`olm.api.clusterextension` (required fields, types, enums, CEL rules), so reading it needs no second
validation: `ExtensionSpec.of` only picks the fields the controller acts on, with their defaults,
and names the field when an object does not have the expected shape (a CRD older than the
controller, say). Keeping pydantic and the models out of the process saves operator-controller
about 11 MiB; the models stay the source of the CRDs, the API docs and `olmctl`'s input checks.

The enums live here, and `olm.api.clusterextension` uses them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

__all__ = [
    "AutomaticUpdates",
    "BundleImage",
    "CRDUpgradeSafetyEnforcement",
    "CatalogSource",
    "ExtensionSpec",
    "OnFailure",
    "PermissionGrowth",
    "Readiness",
    "RemovalPolicy",
    "SpecError",
    "UpgradeConstraintPolicy",
    "UpgradeSpec",
    "removal_policy",
]


class UpgradeConstraintPolicy(StrEnum):
    """Whether the upgrade paths a package author published in the catalog are enforced."""

    CATALOG_PROVIDED = "CatalogProvided"
    SELF_CERTIFIED = "SelfCertified"


class AutomaticUpdates(StrEnum):
    """Which updates an installed extension takes by itself, by their semantic-version class."""

    NONE = "None"
    """None: every update waits for `approvedVersion`."""
    PATCH = "Patch"
    """Patch updates (same major and minor version)."""
    MINOR = "Minor"
    """Minor and patch updates (same major version)."""
    ANY = "Any"
    """Every update (the default, and the behaviour before the field existed)."""


class PermissionGrowth(StrEnum):
    """What an update whose Roles and ClusterRoles grant more than the installed ones does."""

    HOLD = "Hold"
    """Wait for `approvedVersion` to name it (the default, as roadmap F14 asks)."""
    ALLOW = "Allow"
    """Apply as any other update (automation that reviews permissions elsewhere)."""


class Readiness(StrEnum):
    """Whether the extension's operator can hold its own updates through an OperatorCondition."""

    NONE = "None"
    """No OperatorCondition, no `OPERATOR_CONDITION_NAME`: the bundle renders as upstream OLM v1
    renders it (the default, so existing ServiceAccounts need nothing new)."""
    RESPECT = "Respect"
    """Provide OLM v0's OperatorCondition contract and hold an update while the operator says it is
    not upgradeable."""
    IGNORE = "Ignore"
    """Provide the contract and report the operator's signal, but do not obey it (a force
    override)."""


class OnFailure(StrEnum):
    """What happens when an update's revision does not roll out within its progress deadline."""

    STAY = "Stay"
    """Nothing: the previous revision stays in place beside the failed one, as before the field."""
    ROLLBACK = "Rollback"
    """Roll back to the content of the revision that was installed before (roadmap F23, opt-in)."""


class RemovalPolicy(StrEnum):
    """What removing the extension does with the CRDs it installed, and so with their custom
    resources (roadmap F16, F17)."""

    RETAIN = "Retain"
    """Keep the CRDs and every custom resource, working: OLM's labels and ownerReferences are taken
    off, a conversion webhook that goes away with the extension is replaced by `None` conversion
    where that loses nothing, and installing the package again adopts them (the default)."""
    CASCADE = "Cascade"
    """Delete the CRDs first, while the extension's controller still runs to handle its custom
    resources' finalizers, then everything else (opt-in)."""


class CRDUpgradeSafetyEnforcement(StrEnum):
    """Whether the CRD upgrade safety check runs before an upgrade."""

    STRICT = "Strict"
    NONE = "None"


class SpecError(ValueError):
    """The object does not have the shape the CRD gives it; the message names the field."""


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise SpecError(f"{where}: expected an object")
    return value


def _string(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise SpecError(f"{where}.{key}: expected a non-empty string")
    return value


def _optional(data: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
    value = data.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise SpecError(f"{where}.{key}: expected {kind.__name__}")
    return value


_E = TypeVar("_E", bound=StrEnum)


def _enum(data: Mapping[str, Any], key: str, enum: type[_E], default: _E, where: str) -> _E:
    value = data.get(key, default)
    try:
        return enum(value)
    except ValueError:
        raise SpecError(f"{where}.{key}: unknown value {value!r}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogSource:
    """`spec.source.catalog`: which package to install, and from which catalogs."""

    package_name: str
    version: str | None = None
    """A version or range (`olm.semver`); None for any."""
    channels: tuple[str, ...] = ()
    """Empty for every channel."""
    selector: Mapping[str, Any] | None = None
    """A label selector of ClusterCatalogs as JSON (`matchLabels`, `matchExpressions`); None
    selects every catalog."""
    upgrade_constraint_policy: UpgradeConstraintPolicy = UpgradeConstraintPolicy.CATALOG_PROVIDED

    @classmethod
    def parse(cls, data: Mapping[str, Any], where: str = "spec.source.catalog") -> CatalogSource:
        data = _mapping(data, where)
        channels = _optional(data, "channels", list, where) or []
        if not all(isinstance(c, str) for c in channels):
            raise SpecError(f"{where}.channels: expected strings")
        selector = _optional(data, "selector", Mapping, where)
        return cls(
            package_name=_string(data, "packageName", where),
            version=_optional(data, "version", str, where) or None,
            channels=tuple(channels),
            selector=selector,
            upgrade_constraint_policy=_enum(
                data,
                "upgradeConstraintPolicy",
                UpgradeConstraintPolicy,
                UpgradeConstraintPolicy.CATALOG_PROVIDED,
                where,
            ),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BundleImage:
    """`spec.source.bundle`: a registry+v1 bundle image installed without a catalog."""

    ref: str
    poll_interval_minutes: int | None = None
    """Minutes between checks of a tag for new content; None: resolved when the spec changes."""

    @classmethod
    def parse(cls, data: Mapping[str, Any], where: str = "spec.source.bundle") -> BundleImage:
        data = _mapping(data, where)
        return cls(
            ref=_string(data, "ref", where),
            poll_interval_minutes=_optional(data, "pollIntervalMinutes", int, where),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class UpgradeSpec:
    """`spec.upgrade`: when an installed extension moves to the updates its source offers."""

    automatic: AutomaticUpdates = AutomaticUpdates.ANY
    approved_version: str | None = None
    """`approvedVersion`: the one version an administrator approved, whatever `automatic` says."""
    permission_growth: PermissionGrowth = PermissionGrowth.HOLD
    readiness: Readiness = Readiness.NONE
    on_failure: OnFailure = OnFailure.STAY
    rollback_to: str | None = None
    """`rollbackTo`: keep the extension at the content of the newest revision that installed this
    version, restored from that revision."""

    @property
    def operator_condition(self) -> bool:
        """Whether revisions carry OLM v0's OperatorCondition contract (`readiness` not `None`)."""
        return self.readiness is not Readiness.NONE

    @classmethod
    def parse(cls, data: Mapping[str, Any], where: str = "spec.upgrade") -> UpgradeSpec:
        data = _mapping(data, where)
        return cls(
            automatic=_enum(data, "automatic", AutomaticUpdates, AutomaticUpdates.ANY, where),
            approved_version=_optional(data, "approvedVersion", str, where) or None,
            permission_growth=_enum(data, "permissionGrowth", PermissionGrowth, PermissionGrowth.HOLD, where),
            readiness=_enum(data, "readiness", Readiness, Readiness.NONE, where),
            on_failure=_enum(data, "onFailure", OnFailure, OnFailure.STAY, where),
            rollback_to=_optional(data, "rollbackTo", str, where) or None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionSpec:
    """The fields of a ClusterExtension's spec that operator-controller acts on."""

    namespace: str
    service_account: str | None
    """`spec.serviceAccount.name`, in `namespace`; None when the spec names none (as upstream's
    manifests may): operator-controller then installs as its default installer, if one is
    configured, and otherwise holds the extension."""
    catalog: CatalogSource | None
    """`spec.source.catalog`; None for a bundle image source."""
    config: dict[str, Any] | None
    """`spec.config.inline`."""
    crd_upgrade_safety: CRDUpgradeSafetyEnforcement
    """`spec.install.preflight.crdUpgradeSafety.enforcement`, `Strict` when unset."""
    progress_deadline_minutes: int | None
    upgrade: UpgradeSpec = UpgradeSpec()
    """`spec.upgrade`, with its defaults when absent."""
    removal_policy: RemovalPolicy = RemovalPolicy.RETAIN
    """`spec.removal.policy`."""
    bundle: BundleImage | None = None
    """`spec.source.bundle`; None for a catalog source."""

    @classmethod
    def of(cls, extension: Mapping[str, Any]) -> ExtensionSpec:
        """Read the spec of the ClusterExtension `extension`; raises `SpecError`."""
        spec = _mapping(extension.get("spec"), "spec")
        account = _mapping(spec.get("serviceAccount") or {}, "spec.serviceAccount")
        source = _mapping(spec.get("source"), "spec.source")
        catalog = source.get("catalog")
        bundle = source.get("bundle")
        config = _mapping(spec.get("config") or {}, "spec.config")
        install = _mapping(spec.get("install") or {}, "spec.install")
        preflight = _mapping(install.get("preflight") or {}, "spec.install.preflight")
        safety = _mapping(preflight.get("crdUpgradeSafety") or {}, "spec.install.preflight.crdUpgradeSafety")
        return cls(
            namespace=_string(spec, "namespace", "spec"),
            service_account=_string(account, "name", "spec.serviceAccount") if account.get("name") else None,
            catalog=CatalogSource.parse(catalog) if catalog is not None else None,
            config=_optional(config, "inline", dict, "spec.config"),
            crd_upgrade_safety=_enum(
                safety,
                "enforcement",
                CRDUpgradeSafetyEnforcement,
                CRDUpgradeSafetyEnforcement.STRICT,
                "spec.install.preflight.crdUpgradeSafety",
            ),
            progress_deadline_minutes=_optional(spec, "progressDeadlineMinutes", int, "spec"),
            upgrade=UpgradeSpec.parse(spec.get("upgrade") or {}),
            removal_policy=removal_policy(extension),
            bundle=BundleImage.parse(bundle) if bundle is not None else None,
        )


def removal_policy(extension: Mapping[str, Any]) -> RemovalPolicy:
    """`spec.removal.policy` of `extension`, `Retain` when unset. A removal must go ahead whatever
    else is wrong with the spec, so this reads only its own field; raises `SpecError` for a value
    this controller does not know."""
    spec = extension.get("spec")
    removal = spec.get("removal") if isinstance(spec, Mapping) else None
    data = _mapping(removal or {}, "spec.removal")
    return _enum(data, "policy", RemovalPolicy, RemovalPolicy.RETAIN, "spec.removal")
