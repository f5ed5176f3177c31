"""Well-known names of the OLM v1 API: group, version, kinds, labels, Secret type and finalizers.

Every process reads and writes these strings; spelling them once here keeps the controllers, the
CLI, the tests and the documentation in agreement.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "API_VERSION",
    "BUNDLE_NAME_LABEL",
    "BUNDLE_REFERENCE_ANNOTATION",
    "BUNDLE_SOURCE_ANNOTATION",
    "BUNDLE_VERSION_LABEL",
    "CATEGORY",
    "CLEANUP_CONTENT_MANAGER_CACHE_FINALIZER",
    "CLEANUP_UNPACK_CACHE_FINALIZER",
    "CLUSTER_CATALOG",
    "CLUSTER_EXTENSION",
    "CLUSTER_OBJECT_SET",
    "CONTENT_DIGEST_ANNOTATION",
    "DEFAULT_SYSTEM_NAMESPACE",
    "DELETE_SERVER_CACHE_FINALIZER",
    "GROUP",
    "MAJOR_UPGRADEABLE",
    "METADATA_NAME_LABEL",
    "MINOR_UPGRADEABLE",
    "OBJECT_DATA_SECRET_TYPE",
    "OPERATOR_CONDITION",
    "OPERATOR_CONDITION_API_VERSION",
    "OPERATOR_CONDITION_GROUP",
    "OPERATOR_CONDITION_NAME_ENV",
    "OPERATOR_CONDITION_VERSION",
    "OWNER_KIND_LABEL",
    "OWNER_NAME_LABEL",
    "PACKAGE_NAME_LABEL",
    "PROPERTIES_ANNOTATION",
    "REMOVAL_POLICY_ANNOTATION",
    "RENDER_KEY_ANNOTATION",
    "RETAINED_PACKAGE_ANNOTATION",
    "REVISION_NAME_LABEL",
    "ROLLBACK_ANNOTATION",
    "SERVICE_ACCOUNT_NAMESPACE_ANNOTATION",
    "SERVICE_ACCOUNT_NAME_ANNOTATION",
    "TEARDOWN_FINALIZER",
    "UPGRADEABLE",
    "VERSION",
]

GROUP: Final = "olm.operatorframework.io"
VERSION: Final = "v1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
CATEGORY: Final = "olm"
"""`kubectl get olm` lists every object of the three kinds."""

CLUSTER_CATALOG: Final = "ClusterCatalog"
CLUSTER_EXTENSION: Final = "ClusterExtension"
CLUSTER_OBJECT_SET: Final = "ClusterObjectSet"

DEFAULT_SYSTEM_NAMESPACE: Final = "olmv1-system"
"""Where OLM runs and keeps the Secrets behind ClusterObjectSet refs that name no namespace."""

# Labels on ClusterObjectSets (and the objects and Secrets they own) naming their origin.
OWNER_KIND_LABEL: Final = f"{GROUP}/owner-kind"
OWNER_NAME_LABEL: Final = f"{GROUP}/owner-name"
PACKAGE_NAME_LABEL: Final = f"{GROUP}/package-name"
BUNDLE_NAME_LABEL: Final = f"{GROUP}/bundle-name"
BUNDLE_VERSION_LABEL: Final = f"{GROUP}/bundle-version"
REVISION_NAME_LABEL: Final = f"{GROUP}/revision-name"
BUNDLE_REFERENCE_ANNOTATION: Final = f"{GROUP}/bundle-reference"
"""On a ClusterObjectSet: the image (by digest) of the bundle it was rendered from."""
BUNDLE_SOURCE_ANNOTATION: Final = f"{GROUP}/bundle-source"
"""On a ClusterObjectSet of an extension installed from a bundle image (`spec.source.bundle`): the
image reference as `ref` spells it (a tag, usually), so that the digest the revision installed
stands for that tag until the tag is checked again."""
CONTENT_DIGEST_ANNOTATION: Final = f"{GROUP}/content-digest"
"""On a ClusterObjectSet: digest of its rendered content, so an unchanged render makes no new revision."""
RENDER_KEY_ANNOTATION: Final = f"{GROUP}/render-key"
"""On a ClusterObjectSet rendered from a bundle: digest of what its content was rendered from (the
bundle's digest, the extension's namespace, configuration, progress deadline and readiness contract,
OLM's code and settings), so a restarted operator-controller reuses it without pulling the bundle."""
PROPERTIES_ANNOTATION: Final = "olm.properties"
"""On a ClusterObjectSet, as upstream writes it: the bundle's properties (its CSV's `olm.properties`
with `metadata/properties.yaml` merged in) as a JSON list, for tools that read them (for example
`olm.maxOpenShiftVersion`); absent when the bundle has none."""
ROLLBACK_ANNOTATION: Final = f"{GROUP}/rollback"
"""On a ClusterObjectSet that restores an earlier revision's content because a newer one did not
roll out (`spec.upgrade.onFailure: Rollback`): which bundle failed, why, and at which generation of
the extension's spec (JSON, `revisions.RollbackRecord`)."""

REMOVAL_POLICY_ANNOTATION: Final = f"{GROUP}/removal-policy"
"""On a ClusterObjectSet being deleted with its ClusterExtension: the extension's
`spec.removal.policy` (`Retain` or `Cascade`), which decides how its teardown treats the CRDs it
controls. Without it the teardown deletes every object, CRDs last."""
RETAINED_PACKAGE_ANNOTATION: Final = f"{GROUP}/retained-from-package"
"""On a CRD that a removal kept (`spec.removal.policy: Retain`): the package that installed it. A
revision of the same package adopts such a CRD when it has no controller."""

# Annotations on a ClusterObjectSet naming the ServiceAccount its objects are applied as.
SERVICE_ACCOUNT_NAME_ANNOTATION: Final = f"{GROUP}/service-account-name"
SERVICE_ACCOUNT_NAMESPACE_ANNOTATION: Final = f"{GROUP}/service-account-namespace"
"""On Secrets holding ClusterObjectSet content: the revision (ClusterObjectSet) they belong to."""

METADATA_NAME_LABEL: Final = f"{GROUP}/metadata.name"
"""Set by catalogd on every ClusterCatalog to its own name, so selectors can pick catalogs by name."""

OBJECT_DATA_SECRET_TYPE: Final = f"{GROUP}/object-data"
"""Type of the immutable Secrets that hold object manifests referenced from ClusterObjectSets."""

CLEANUP_UNPACK_CACHE_FINALIZER: Final = f"{GROUP}/cleanup-unpack-cache"
"""ClusterExtension: remove the unpacked bundle from the local cache before deletion."""
CLEANUP_CONTENT_MANAGER_CACHE_FINALIZER: Final = f"{GROUP}/cleanup-contentmanager-cache"
"""ClusterExtension: stop the watches on installed content before deletion."""
DELETE_SERVER_CACHE_FINALIZER: Final = f"{GROUP}/delete-server-cache"
"""ClusterCatalog: delete the stored and served catalog content before deletion."""
TEARDOWN_FINALIZER: Final = f"{GROUP}/teardown"
"""ClusterObjectSet: release or delete managed objects before deletion."""

# OLM v0's OperatorCondition, served for operators built with operator-lib (`spec.upgrade.readiness`).
OPERATOR_CONDITION_GROUP: Final = "operators.coreos.com"
OPERATOR_CONDITION_VERSION: Final = "v2"
OPERATOR_CONDITION_API_VERSION: Final = f"{OPERATOR_CONDITION_GROUP}/{OPERATOR_CONDITION_VERSION}"
OPERATOR_CONDITION: Final = "OperatorCondition"
OPERATOR_CONDITION_NAME_ENV: Final = "OPERATOR_CONDITION_NAME"
"""The variable naming an operator's OperatorCondition, as OLM v0 injects it."""
UPGRADEABLE: Final = "Upgradeable"
"""OperatorCondition type: False holds every update (OLM v0's)."""
MINOR_UPGRADEABLE: Final = "MinorUpgradeable"
"""OperatorCondition type: False holds minor and major updates; patch updates pass (roadmap F25)."""
MAJOR_UPGRADEABLE: Final = "MajorUpgradeable"
"""OperatorCondition type: False holds major updates."""
