"""ClusterExtension: a package from a catalog, installed and kept up to date on the cluster.

operator-controller resolves the package against the ClusterCatalogs (honouring version range,
channels, catalog selector and upgrade policy), unpacks the chosen bundle and rolls it out as
ClusterObjectSet revisions, acting as `spec.serviceAccount` in `spec.namespace`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from olm.api import names, rules
from olm.api.base import AGE_COLUMN, Model, PrinterColumn, Resource, ResourceInfo, condition_status_column
from olm.api.extensionspec import (
    AutomaticUpdates,
    CRDUpgradeSafetyEnforcement,
    OnFailure,
    PermissionGrowth,
    Readiness,
    RemovalPolicy,
    UpgradeConstraintPolicy,
)
from olm.api.markers import PRESERVE_UNKNOWN_FIELDS, ListMap, Rule, object_rules
from olm.api.meta import Conditions, ImageRef, LabelSelector, PollIntervalMinutes, ProgressDeadlineMinutes

__all__ = [
    "AutomaticUpdates",
    "AvailableUpdate",
    "BundleImageSource",
    "BundleMetadata",
    "CRDUpgradeSafetyEnforcement",
    "CRDUpgradeSafetyPreflightConfig",
    "CatalogFilter",
    "ClusterExtension",
    "ClusterExtensionConfig",
    "ClusterExtensionConfigType",
    "ClusterExtensionInstallConfig",
    "ClusterExtensionInstallStatus",
    "ClusterExtensionRemoval",
    "ClusterExtensionSpec",
    "ClusterExtensionStatus",
    "ClusterExtensionUpgrade",
    "ExtensionSourceType",
    "HeldUpdate",
    "OnFailure",
    "PermissionGrowth",
    "PreflightConfig",
    "Readiness",
    "RemovalPolicy",
    "RevisionStatus",
    "RolledBackUpdate",
    "ServiceAccountReference",
    "SourceConfig",
    "UpdateStatus",
    "UpgradeConstraintPolicy",
]

VersionRange = Annotated[
    str,
    Field(max_length=64),
    Rule(
        f"self.matches(r'{rules.VERSION_RANGE}')",
        "invalid version expression: use a version such as 1.2.3 or a range such as "
        "'>=1.2.0, <2.0.0', '~1.2', '^1', '1.2.x' or '<1.0 || >=2.0' (no leading zeros, "
        "at most three version parts, no '-' ranges or '&&')",
    ),
]
Channels = Annotated[
    list[Annotated[str, Field(max_length=253), rules.dns1123_subdomain("channels entries")]],
    Field(max_length=256),
]


class ExtensionSourceType(StrEnum):
    """Where installable content comes from."""

    CATALOG = "Catalog"
    BUNDLE = "Bundle"


class ClusterExtensionConfigType(StrEnum):
    """How bundle configuration is supplied."""

    INLINE = "Inline"


class ServiceAccountReference(Model):
    """The ServiceAccount every install and upgrade of this extension runs as."""

    name: (
        Annotated[
            str,
            Field(min_length=1, max_length=253),
            rules.immutable("serviceAccount.name"),
            rules.dns1123_subdomain("serviceAccount.name"),
        ]
        | None
    ) = None
    """Name of a ServiceAccount in `spec.namespace`, with the permissions to manage every object
    of the bundle. It may be set later and cleared (as upstream allows), but not changed:
    changing the identity of an installation needs a new ClusterExtension. Unset, as an absent
    `serviceAccount`."""


class CatalogFilter(Model):
    """Which package to install from the catalogs, and which of its bundles are acceptable."""

    package_name: Annotated[
        str,
        Field(max_length=253),
        rules.immutable("packageName"),
        rules.dns1123_subdomain("packageName"),
    ]
    """Name of the package to install. Immutable."""
    version: VersionRange | None = None
    """A version or version range the installed bundle must satisfy; the newest match wins.

    Comparisons are an optional operator (`=`, `!=`, `>`, `<`, `>=`, `=>`, `<=`,
    `=<`, `~`, `~>`, `^`) and a version with up to three parts, where `x`, `X` or `*`
    stand for any value, an optional `v` prefix and optional pre-release and build suffixes.
    Comparisons separated by spaces or commas must all hold; `||` separates alternatives.
    At most 64 characters. When omitted, the newest version is installed.
    """
    channels: Channels | None = None
    """Channels the bundle must belong to; automatic upgrades follow the upgrade edges of these
    channels. When omitted, all channels are considered. At most 256 entries."""
    selector: LabelSelector | None = None
    """Restricts which ClusterCatalogs are searched, by their labels (every catalog carries
    `olm.operatorframework.io/metadata.name`). When omitted, all catalogs are searched."""
    upgrade_constraint_policy: UpgradeConstraintPolicy = UpgradeConstraintPolicy.CATALOG_PROVIDED
    """`CatalogProvided` (the default) only upgrades along the paths the package author
    published. `SelfCertified` allows any upgrade or downgrade to a version the other fields
    accept; only use it after verifying the change yourself, as data loss is possible."""


class BundleImageSource(Model):
    """A registry+v1 bundle image installed as it is, without a catalog (roadmap F7, F18)."""

    model_config = object_rules(rules.NO_POLLING_A_DIGEST)

    ref: ImageRef
    """The bundle image: `<domain>/<path>:<tag>` or `<domain>/<path>@<algorithm>:<hex>`, as for a
    ClusterCatalog's image. The package, bundle name and version are read from the image (its
    `metadata/annotations.yaml` and its ClusterServiceVersion)."""
    poll_interval_minutes: PollIntervalMinutes | None = None
    """How often, in minutes, to check whether the tag in `ref` points to new content; new content
    is installed as an update, through the same CRD upgrade safety and permission checks. Only for
    tag references; when omitted, the tag is resolved when the spec changes and not polled."""


class SourceConfig(Model):
    """The source of installable content; `sourceType` says which of the other fields is set."""

    model_config = object_rules(
        Rule(
            "self.sourceType == 'Catalog' ? has(self.catalog) : !has(self.catalog)",
            "catalog is required when sourceType is Catalog, and must not be set otherwise",
        ),
        Rule(
            "self.sourceType == 'Bundle' ? has(self.bundle) : !has(self.bundle)",
            "bundle is required when sourceType is Bundle, and must not be set otherwise",
        ),
    )

    source_type: ExtensionSourceType
    """The kind of source: `Catalog`, which requires `catalog`, or `Bundle`, which requires
    `bundle`."""
    catalog: CatalogFilter | None = None
    """What to install from the ClusterCatalogs."""
    bundle: BundleImageSource | None = None
    """A bundle image to install without a catalog. No upgrade graph applies: the extension runs
    what the image holds, and follows its tag when `pollIntervalMinutes` is set."""


class CRDUpgradeSafetyPreflightConfig(Model):
    """The CRD upgrade safety check: refuses upgrades whose CRD changes could lose data."""

    enforcement: CRDUpgradeSafetyEnforcement = CRDUpgradeSafetyEnforcement.STRICT
    """`Strict` (the default) runs the check; `None` skips it, which may break existing custom
    resources."""


class PreflightConfig(Model):
    """Checks that run before an install or upgrade is applied."""

    model_config = object_rules(
        Rule("has(self.crdUpgradeSafety)", "preflight must set crdUpgradeSafety when present")
    )

    crd_upgrade_safety: CRDUpgradeSafetyPreflightConfig | None = None
    """Configures the CRD upgrade safety check."""


class ClusterExtensionInstallConfig(Model):
    """Options for installs and upgrades."""

    model_config = object_rules(Rule("has(self.preflight)", "install must set preflight when present"))

    preflight: PreflightConfig | None = None
    """Configures the preflight checks; when omitted, every check runs with its defaults."""


class ClusterExtensionConfig(Model):
    """Bundle configuration; `configType` says which of the other fields is set."""

    model_config = object_rules(
        Rule(
            "self.configType == 'Inline' ? has(self.inline) : !has(self.inline)",
            "inline is required when configType is Inline, and must not be set otherwise",
        )
    )

    config_type: ClusterExtensionConfigType
    """How the configuration is supplied. The only value is `Inline`, which requires `inline`."""
    inline: Annotated[dict[str, Any], Field(min_length=1), PRESERVE_UNKNOWN_FIELDS] | None = None
    """Configuration values, validated against the schema the bundle declares; for example
    `watchNamespace` for bundles that can watch a single namespace. Must have at least one
    property."""


class ClusterExtensionUpgrade(Model):
    """When the installed extension moves to the updates its source offers (where it may go is
    `source.catalog`: version range, channels, upgrade constraint policy)."""

    automatic: AutomaticUpdates = AutomaticUpdates.ANY
    """Which updates apply by themselves, by their semantic-version class relative to the installed
    version: `None` (none), `Patch` (same major and minor), `Minor` (same major) or `Any` (the
    default). An update the policy holds is still found and reported in `status.update`. The first
    install is never held."""
    approved_version: (
        Annotated[
            str,
            Field(max_length=256),
            rules.matches(rules.SEMVER, "approvedVersion must be a semantic version such as 1.2.3"),
        ]
        | None
    ) = None
    """The one version an administrator approved: the extension moves to exactly this version (along
    the catalog's upgrade path to it, when it is more than one step away) whatever `automatic` says,
    and not beyond it. A version that cannot be reached is reported (`UpdateHeld`, reason
    `ApprovalNotReachable`) and nothing changes."""
    permission_growth: PermissionGrowth = PermissionGrowth.HOLD
    """What an update does whose Roles and ClusterRoles grant permissions the installed bundle's do
    not: `Hold` (the default) keeps it until `approvedVersion` names it, with the added rules in
    `status.update.held.addedPermissions`; `Allow` applies it as any other update. A first install
    is never held."""
    readiness: Readiness = Readiness.NONE
    """Whether the operator may hold its own updates, as operators built with operator-lib do under
    OLM v0: `None` (the default) renders the bundle as upstream OLM v1 does; `Respect` adds an
    OperatorCondition (operators.coreos.com/v2) named after the CSV, the `OPERATOR_CONDITION_NAME`
    variable in its Deployments and a Role letting their ServiceAccounts update that one object, and
    holds an update while its `Upgradeable` condition is False (`MinorUpgradeable` False holds minor
    and major updates, `MajorUpgradeable` False major ones); `Ignore` provides the same but only
    reports the signal (a force override). Changing between `None` and the others rolls out a new
    revision; the ServiceAccount then needs the permissions for those objects."""
    on_failure: OnFailure = OnFailure.STAY
    """What an update does whose revision does not roll out within `progressDeadlineMinutes`:
    `Stay` (the default) leaves it in place beside the previous revision; `Rollback` rolls the
    extension back to the content of the revision installed before it (restored from that
    revision, with the CRD upgrade safety check against the cluster's CRDs), reports it in
    `status.update.rolledBack`, and does not try the failed bundle again until the spec changes or
    a newer bundle is offered. Needs `progressDeadlineMinutes`."""
    rollback_to: (
        Annotated[
            str,
            Field(max_length=256),
            rules.matches(rules.SEMVER, "rollbackTo must be a semantic version such as 1.2.3"),
        ]
        | None
    ) = None
    """While set, the extension is kept at the content of the newest revision of it that installed
    this version, restored from that revision's ClusterObjectSet (no catalog is read and no image
    pulled); catalogs and `approvedVersion` are not consulted. The restored CRDs pass the CRD
    upgrade safety check against the cluster's, so a rollback that would lose stored data is
    refused. Remove the field to resume updates."""


class ClusterExtensionRemoval(Model):
    """What deleting the ClusterExtension removes (roadmap F16, F17)."""

    policy: RemovalPolicy = RemovalPolicy.RETAIN
    """`Retain` (the default) keeps the CRDs the extension installed, and so every custom resource,
    in a working state: OLM's labels and ownerReferences are taken off, a conversion webhook served
    by the extension is replaced by `None` conversion when all versions share one schema (otherwise
    the CRD is kept as it is and an Event says why), and a later ClusterExtension for the same
    package adopts them. `Cascade` deletes the CRDs first, and with them every custom resource,
    while the extension's controller still runs to handle their finalizers; then the rest of the
    extension. Everything else the extension installed is deleted under both policies. The policy
    in force when the deletion is finalized applies."""


class ClusterExtensionSpec(Model):
    """The package to install and how to install it."""

    model_config = object_rules(
        Rule(
            "!has(self.upgrade) || !has(self.upgrade.onFailure) || self.upgrade.onFailure != 'Rollback'"
            " || has(self.progressDeadlineMinutes)",
            "spec.upgrade.onFailure Rollback needs spec.progressDeadlineMinutes: a rollout fails only "
            "once its deadline passes",
        )
    )

    namespace: Annotated[
        str,
        Field(max_length=63),
        rules.immutable("namespace"),
        rules.dns1123_label("namespace"),
    ]
    """The namespace the ServiceAccount lives in and namespaced objects of the bundle go to by
    default. It must exist. Immutable."""
    service_account: ServiceAccountReference | None = None
    """The ServiceAccount installs and upgrades run as. Optional, as in upstream OLM v1.11 (which
    deprecated it): without it, the extension is installed as the default installer that
    operator-controller's `--default-service-account` names, or, when none is configured, held
    (`Progressing` False, reason `Blocked`) with a message that says how to grant one. OLM's own
    identity never installs an extension."""
    source: SourceConfig
    """Where the content comes from."""
    install: ClusterExtensionInstallConfig | None = None
    """Options for installs and upgrades."""
    config: ClusterExtensionConfig | None = None
    """Bundle-specific configuration; when omitted, the bundle's defaults apply."""
    progress_deadline_minutes: ProgressDeadlineMinutes | None = None
    """Minutes a rollout may take before it is reported as failed (`Progressing` False with
    reason `ProgressDeadlineExceeded`), from 10 to 720. When omitted, there is no deadline."""
    upgrade: ClusterExtensionUpgrade | None = None
    """When updates apply: by themselves, by semantic-version class, or once approved. When omitted,
    every update applies as soon as it is found."""
    removal: ClusterExtensionRemoval | None = None
    """What deleting the ClusterExtension removes. When omitted, the CRDs and their custom
    resources are kept (`policy: Retain`)."""


class BundleMetadata(Model):
    """Identifies a bundle: a versioned set of manifests that installs a package."""

    name: Annotated[str, Field(max_length=253), rules.dns1123_subdomain("bundle name")]
    """Name of the bundle in the catalog."""
    version: Annotated[
        str,
        Field(max_length=256),
        rules.matches(rules.SEMVER, "bundle version must be a semantic version such as 1.2.3"),
    ]
    """Semantic version of the bundle."""


class ClusterExtensionInstallStatus(Model):
    """What is installed."""

    bundle: BundleMetadata
    """The installed bundle."""


class AvailableUpdate(Model):
    """The newest bundle the installed one can move to, and the upgrade path there."""

    name: Annotated[str, Field(max_length=253), rules.dns1123_subdomain("bundle name")]
    """Name of the bundle in the catalog."""
    version: Annotated[str, Field(max_length=256)]
    """Semantic version of the bundle."""
    catalog: Annotated[str, Field(max_length=253)]
    """The ClusterCatalog that offers it."""
    path: Annotated[list[Annotated[str, Field(max_length=253)]], Field(max_length=256)]
    """The bundles installed one after the other to get there, the last being this one."""


class HeldUpdate(Model):
    """The step the extension would take now, were nothing holding it."""

    name: Annotated[str, Field(max_length=253), rules.dns1123_subdomain("bundle name")]
    """Name of the bundle in the catalog."""
    version: Annotated[str, Field(max_length=256)]
    """Semantic version of the bundle."""
    held_by: Annotated[str, Field(max_length=64)]
    """What holds it: `ApprovalRequired` (`spec.upgrade.automatic: None`), `OutsidePolicy` (its
    semantic-version class is beyond `spec.upgrade.automatic`), `PermissionGrowth` (it grants
    more than the installed bundle and `spec.upgrade.permissionGrowth` is `Hold`),
    `ClusterVersion` (it needs a Kubernetes version this cluster is not), `Readiness` (the
    installed operator's OperatorCondition says it is not upgradeable) or `RolledBack` (it did not
    roll out and was rolled back; it is tried again once the spec changes)."""
    added_permissions: (
        Annotated[list[Annotated[str, Field(max_length=1024)]], Field(max_length=512)] | None
    ) = None
    """With `PermissionGrowth`: exactly the permissions added, one line per namespace, group,
    resource and name with its verbs (the permission preflight's wording)."""


class RolledBackUpdate(Model):
    """An update that did not roll out and was rolled back (`spec.upgrade.onFailure: Rollback`)."""

    failed: BundleMetadata
    """The bundle whose revision did not roll out."""
    restored: BundleMetadata
    """The bundle whose revision's content was restored."""
    reason: Annotated[str, Field(max_length=64)]
    """Why: `ProgressDeadlineExceeded`."""


class UpdateStatus(Model):
    """Updates found and held."""

    available: AvailableUpdate | None = None
    """The newest reachable bundle beyond the installed one; absent when there is none."""
    held: HeldUpdate | None = None
    """The step that `spec.upgrade` keeps from applying; absent when nothing is held."""
    rolled_back: RolledBackUpdate | None = None
    """The update last rolled back, while the extension runs the restored content."""


class RevisionStatus(Model):
    """An active ClusterObjectSet revision of the extension."""

    name: Annotated[str, Field(min_length=1, max_length=253)]
    """Name of the ClusterObjectSet."""
    conditions: Conditions | None = None
    """Its `Progressing` and `Available` conditions while it has not yet succeeded."""


class ClusterExtensionStatus(Model):
    """What operator-controller observed and did."""

    conditions: Conditions | None = None
    """`Installed`: whether a bundle is installed. `Progressing`: whether the extension is moving
    towards its desired state (Succeeded, RollingOut, Retrying; Blocked or InvalidConfiguration
    when a change is needed; ProgressDeadlineExceeded). `Available`: mirrored from the installed
    revision. `PackageDeprecated`, `ChannelDeprecated`, `BundleDeprecated`: deprecation
    notices from the catalog; `Deprecated` rolls them up. `UpdateAvailable`: whether a newer bundle
    can be reached from the installed one. `UpdateHeld`: whether `spec.upgrade` keeps a step from
    applying (reason `ApprovalRequired`, `OutsidePolicy`, `ApprovalNotReachable`,
    `PermissionGrowth`, `ClusterVersion`, `Readiness` or `RolledBack`)."""
    install: ClusterExtensionInstallStatus | None = None
    """The installed bundle, once there is one."""
    active_revisions: Annotated[list[RevisionStatus], ListMap("name")] | None = None
    """Revisions not yet archived: the installed one and any rolling out."""
    update: UpdateStatus | None = None
    """The newest update the catalogs offer and the step `spec.upgrade` holds, once something is
    installed (the `UpdateAvailable` and `UpdateHeld` conditions say the same in words)."""


class ClusterExtension(Resource):
    """A package installed from a catalog and kept up to date."""

    info: ClassVar[ResourceInfo] = ResourceInfo(
        kind=names.CLUSTER_EXTENSION,
        plural="clusterextensions",
        singular="clusterextension",
        short_names=("clusterext",),
        printer_columns=(
            PrinterColumn(name="Installed Bundle", json_path=".status.install.bundle.name"),
            PrinterColumn(name="Version", json_path=".status.install.bundle.version"),
            condition_status_column("Installed"),
            condition_status_column("Progressing"),
            # Wide only: the default output stays column-for-column upstream's, which scripts parse.
            PrinterColumn(name="Update", json_path=".status.update.available.version", priority=1),
            PrinterColumn(name="Held By", json_path=".status.update.held.heldBy", priority=1),
            AGE_COLUMN,
        ),
    )

    kind: Literal["ClusterExtension"] = names.CLUSTER_EXTENSION
    spec: ClusterExtensionSpec
    """The desired installation."""
    status: ClusterExtensionStatus | None = None
    """The observed state, written by operator-controller."""
