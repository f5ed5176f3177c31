"""Well-known names and condition tables are API: changing one must be a deliberate edit here."""

from __future__ import annotations

import re
from collections.abc import Mapping

from olm.api import conditions, names
from olm.api import models as api
from olm.api.meta import CONDITION_REASON_PATTERN


def test_group_version_and_kinds() -> None:
    assert names.API_VERSION == "olm.operatorframework.io/v1"
    assert [r.info.kind for r in api.RESOURCES] == ["ClusterCatalog", "ClusterExtension", "ClusterObjectSet"]


def test_labels_secret_type_and_finalizers() -> None:
    assert {
        names.OWNER_KIND_LABEL,
        names.OWNER_NAME_LABEL,
        names.PACKAGE_NAME_LABEL,
        names.BUNDLE_NAME_LABEL,
        names.BUNDLE_VERSION_LABEL,
        names.REVISION_NAME_LABEL,
        names.METADATA_NAME_LABEL,
    } == {
        "olm.operatorframework.io/owner-kind",
        "olm.operatorframework.io/owner-name",
        "olm.operatorframework.io/package-name",
        "olm.operatorframework.io/bundle-name",
        "olm.operatorframework.io/bundle-version",
        "olm.operatorframework.io/revision-name",
        "olm.operatorframework.io/metadata.name",
    }
    assert names.OBJECT_DATA_SECRET_TYPE == "olm.operatorframework.io/object-data"
    assert {
        names.CLEANUP_UNPACK_CACHE_FINALIZER,
        names.CLEANUP_CONTENT_MANAGER_CACHE_FINALIZER,
        names.DELETE_SERVER_CACHE_FINALIZER,
        names.TEARDOWN_FINALIZER,
    } == {
        "olm.operatorframework.io/cleanup-unpack-cache",
        "olm.operatorframework.io/cleanup-contentmanager-cache",
        "olm.operatorframework.io/delete-server-cache",
        "olm.operatorframework.io/teardown",
    }


def _pairs(table: Mapping[str, frozenset[str]]) -> set[tuple[str, str]]:
    return {(t, r) for t, reasons in table.items() for r in reasons}


def test_cluster_object_set_conditions_cover_the_spec_table() -> None:
    # The tables of the ClusterObjectSet document, row by row.
    documented = {
        ("Progressing", "RollingOut"),
        ("Progressing", "Retrying"),
        ("Progressing", "Succeeded"),
        ("Progressing", "Blocked"),
        ("Progressing", "Archived"),
        ("Available", "ProbesSucceeded"),
        ("Available", "ProbeFailure"),
        ("Available", "Reconciling"),
        ("Available", "Archived"),
        ("Available", "Migrated"),
        ("Succeeded", "Succeeded"),
    }
    table = _pairs(conditions.CLUSTER_OBJECT_SET)
    assert documented <= table
    # Beyond the document: the deadline outcome, "not yet available while rolling out" and the
    # teardown of a removal waiting on something (spec.removal.policy).
    assert table - documented == {
        ("Progressing", "ProgressDeadlineExceeded"),
        ("Available", "RollingOut"),
        ("Progressing", "Removing"),
    }


def test_cluster_catalog_conditions() -> None:
    assert _pairs(conditions.CLUSTER_CATALOG) == {
        ("Serving", "Available"),
        ("Serving", "Unavailable"),
        ("Serving", "UserSpecifiedUnavailable"),
        ("Progressing", "Succeeded"),
        ("Progressing", "Retrying"),
        ("Progressing", "Blocked"),
    }


def test_cluster_extension_conditions() -> None:
    table = conditions.CLUSTER_EXTENSION
    assert set(table) == {
        "Installed",
        "Progressing",
        "Deprecated",
        "PackageDeprecated",
        "ChannelDeprecated",
        "BundleDeprecated",
        "Available",
        "UpdateAvailable",
        "UpdateHeld",
    }
    assert table["Installed"] == {"Succeeded", "Failed", "Absent"}
    assert table["UpdateAvailable"] == {"UpdateAvailable", "UpToDate"}
    assert table["UpdateHeld"] == {
        "ApprovalRequired",
        "OutsidePolicy",
        "ApprovalNotReachable",
        "PermissionGrowth",
        "Readiness",
        "RolledBack",
        "ClusterVersion",
        "NotHeld",
    }
    assert table["Progressing"] == {
        "Succeeded",
        "Retrying",
        "Blocked",
        "InvalidConfiguration",
        "RollingOut",
        "ProgressDeadlineExceeded",
        "Removing",
    }
    assert table["BundleDeprecated"] == table["Deprecated"] | {"Absent"}
    assert table["Available"] == conditions.CLUSTER_OBJECT_SET["Available"]


def test_every_reason_matches_the_condition_reason_pattern() -> None:
    pattern = re.compile(CONDITION_REASON_PATTERN)
    for table in (conditions.CLUSTER_CATALOG, conditions.CLUSTER_EXTENSION, conditions.CLUSTER_OBJECT_SET):
        for reasons in table.values():
            assert all(pattern.match(r) for r in reasons)


def test_public_surface_is_pinned() -> None:
    # A name added to or dropped from olm.api is an API change; update this list deliberately.
    assert sorted(api.__all__) == sorted(
        [
            "COMPATIBILITY_RESOURCES",
            "RESOURCES",
            "Assertion",
            "AssertionType",
            "AvailabilityMode",
            "BundleMetadata",
            "CRDUpgradeSafetyEnforcement",
            "CRDUpgradeSafetyPreflightConfig",
            "CatalogFilter",
            "CatalogSource",
            "CatalogSourceType",
            "CatalogURLs",
            "ClusterCatalog",
            "ClusterCatalogSpec",
            "ClusterCatalogStatus",
            "ClusterExtension",
            "ClusterExtensionConfig",
            "ClusterExtensionConfigType",
            "ClusterExtensionInstallConfig",
            "ClusterExtensionInstallStatus",
            "ClusterExtensionSpec",
            "ClusterExtensionStatus",
            "ClusterObjectSet",
            "ClusterObjectSetObject",
            "ClusterObjectSetPhase",
            "ClusterObjectSetSpec",
            "ClusterObjectSetStatus",
            "CollisionProtection",
            "Condition",
            "ConditionEqualProbe",
            "ConditionStatus",
            "ExpectedConditionStatus",
            "ExtensionSourceType",
            "FieldValueProbe",
            "FieldsEqualProbe",
            "GroupKind",
            "ImageSource",
            "LabelSelector",
            "LabelSelectorOperator",
            "LabelSelectorRequirement",
            "LifecycleState",
            "Model",
            "ObjectMeta",
            "ObjectSelector",
            "ObjectSourceRef",
            "ObservedPhase",
            "OperatorCondition",
            "OperatorConditionSpec",
            "OperatorConditionStatus",
            "OwnerReference",
            "PreflightConfig",
            "PrinterColumn",
            "ProgressionProbe",
            "ResolvedCatalogSource",
            "ResolvedImageSource",
            "Resource",
            "ResourceInfo",
            "RevisionStatus",
            "SelectorType",
            "ServiceAccountReference",
            "SourceConfig",
            "UpgradeConstraintPolicy",
            "conditions",
            "markers",
            "names",
            "rules",
        ]
    )
    assert all(hasattr(api, name) for name in api.__all__)
