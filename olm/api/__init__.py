"""The OLM v1 API: ClusterCatalog, ClusterExtension and ClusterObjectSet as pydantic models.

Group `olm.operatorframework.io`, version `v1`; all three kinds are cluster-scoped and have a
`status` subresource.

The models are the single source of truth for the API: `hack.crdgen` generates the CRDs under
`manifests/crds/` from them (`make manifests`), including the CEL rules the API server enforces
(immutability, unions, formats). What the models promise:

- Wire compatibility: `Resource.from_dict` reads what the API server returns and `to_dict` writes
  what it accepts, camelCase keys and all; attributes are snake_case. Top-level and metadata fields
  the models do not know (`metadata.managedFields`) survive a round trip; embedded objects of a
  ClusterObjectSet are kept verbatim.
- Pydantic validation checks types, enums and simple bounds only. The CEL rules (unions,
  immutability, reference and version syntax) run in the API server, which is the authority.
- Well-known strings live in `names` (labels, finalizers, Secret type) and `conditions`
  (condition types and reasons per kind).

Import modules, not names, where it reads better: `names.OWNER_NAME_LABEL`,
`conditions.TYPE_INSTALLED`.
"""

from olm.api import conditions, markers, names, rules
from olm.api.base import Model, ObjectMeta, OwnerReference, PrinterColumn, Resource, ResourceInfo
from olm.api.clustercatalog import (
    AvailabilityMode,
    CatalogSource,
    CatalogSourceType,
    CatalogURLs,
    ClusterCatalog,
    ClusterCatalogSpec,
    ClusterCatalogStatus,
    ImageSource,
    ResolvedCatalogSource,
    ResolvedImageSource,
)
from olm.api.clusterextension import (
    BundleMetadata,
    CatalogFilter,
    ClusterExtension,
    ClusterExtensionConfig,
    ClusterExtensionConfigType,
    ClusterExtensionInstallConfig,
    ClusterExtensionInstallStatus,
    ClusterExtensionSpec,
    ClusterExtensionStatus,
    CRDUpgradeSafetyEnforcement,
    CRDUpgradeSafetyPreflightConfig,
    ExtensionSourceType,
    PreflightConfig,
    RevisionStatus,
    ServiceAccountReference,
    SourceConfig,
    UpgradeConstraintPolicy,
)
from olm.api.clusterobjectset import (
    ClusterObjectSet,
    ClusterObjectSetObject,
    ClusterObjectSetPhase,
    ClusterObjectSetSpec,
    ClusterObjectSetStatus,
    CollisionProtection,
    LifecycleState,
    ObjectSourceRef,
    ObservedPhase,
)
from olm.api.meta import (
    Condition,
    ConditionStatus,
    LabelSelector,
    LabelSelectorOperator,
    LabelSelectorRequirement,
)
from olm.api.probes import (
    Assertion,
    AssertionType,
    ConditionEqualProbe,
    ExpectedConditionStatus,
    FieldsEqualProbe,
    FieldValueProbe,
    GroupKind,
    ObjectSelector,
    ProgressionProbe,
    SelectorType,
)

RESOURCES: tuple[type[Resource], ...] = (ClusterCatalog, ClusterExtension, ClusterObjectSet)
"""Every kind of the API, in the order the CRDs are generated and documented."""

__all__ = [
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
