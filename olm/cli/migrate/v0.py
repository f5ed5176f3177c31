"""What OLM v0 writes, read as data: its kinds, the installations its objects describe, and which
cluster objects it made for an installation (pure logic; `inventory` reads them from the cluster).

An installation is one Subscription and the CSV it installed, in the namespace of its
OperatorGroup. v0 marks what it made for a CSV in three ways, each of which `made_by` accepts: a
non-controller owner reference to the CSV (namespaced objects), the `olm.owner` labels
(cluster-scoped objects, which v0's CSV finalizer deletes by that selector), and, on CRDs, the
`operators.coreos.com/<package>.<namespace>` label of the installation's operator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from olm.api import names
from olm_runtime.client import GroupVersionKind

__all__ = [
    "CATALOG_SOURCE",
    "CSV",
    "INSTALL_PLAN",
    "MIGRATED_FROM_ANNOTATION",
    "OPERATOR",
    "OPERATOR_GROUP",
    "SUBSCRIPTION",
    "V0_LABELS",
    "InstallMode",
    "Installation",
    "install_mode",
    "made_by",
    "operator_label",
    "owned_crds",
    "plan_of",
    "released_metadata",
]

GROUP: Final = "operators.coreos.com"
SUBSCRIPTION: Final = GroupVersionKind(GROUP, "v1alpha1", "Subscription")
CSV: Final = GroupVersionKind(GROUP, "v1alpha1", "ClusterServiceVersion")
INSTALL_PLAN: Final = GroupVersionKind(GROUP, "v1alpha1", "InstallPlan")
CATALOG_SOURCE: Final = GroupVersionKind(GROUP, "v1alpha1", "CatalogSource")
OPERATOR_GROUP: Final = GroupVersionKind(GROUP, "v1", "OperatorGroup")
OPERATOR: Final = GroupVersionKind(GROUP, "v1", "Operator")
"""v0's cluster-scoped view of one installation, `<package>.<namespace>`, kept while any object
carries the installation's `operator_label`."""

OWNER_LABEL: Final = "olm.owner"
OWNER_KIND_LABEL: Final = "olm.owner.kind"
OWNER_NAMESPACE_LABEL: Final = "olm.owner.namespace"
V0_LABELS: Final = (
    OWNER_LABEL,
    OWNER_KIND_LABEL,
    OWNER_NAMESPACE_LABEL,
    "olm.managed",
    "olm.deployment-spec-hash",
    "olm.permissions.hash",
)
"""The labels v0 puts on what it made for a CSV: ownership (the finalizer's selector) and the
bookkeeping of its installers."""
INSTALLED_ALONGSIDE_PREFIX: Final = "operatorframework.io/installed-alongside-"
"""v0's annotations on a CRD naming each `<namespace>/<csv>` it was installed with."""
MIGRATED_FROM_ANNOTATION: Final = f"{names.GROUP}/migrated-from"
"""On a ClusterExtension `olmctl migrate` wrote, until the migration is complete: `<namespace>/<csv>`,
the v0 installation it replaces; a run interrupted before the end is resumed by it."""
COPIED_FROM_LABEL: Final = "olm.copiedFrom"
"""On the copies of a CSV v0 writes into each target namespace: not installations."""


def operator_label(package: str, namespace: str) -> str:
    """The label v0's Operator API puts on every component of `package` installed in `namespace`."""
    return f"{GROUP}/{package}.{namespace}"


@dataclass(frozen=True)
class InstallMode:
    """How an OperatorGroup scopes an operator: `mode` is AllNamespaces, OwnNamespace,
    SingleNamespace or MultiNamespace; `watch` the namespace OLM v1's `watchNamespace` takes
    (None for AllNamespaces)."""

    mode: str
    watch: str | None
    targets: tuple[str, ...]


def install_mode(namespace: str, operator_group: Mapping[str, Any]) -> InstallMode:
    """The install mode OperatorGroup `operator_group` in `namespace` gives its operators."""
    spec = operator_group.get("spec") or {}
    if spec.get("selector"):
        # A label selector picks namespaces that change over time: read what v0 resolved it to.
        targets = tuple(sorted((operator_group.get("status") or {}).get("namespaces") or ()))
    else:
        targets = tuple(sorted(spec.get("targetNamespaces") or ()))
    if not targets or targets == ("",):
        return InstallMode("AllNamespaces", None, ())
    if len(targets) > 1:
        return InstallMode("MultiNamespace", None, targets)
    if targets[0] == namespace:
        return InstallMode("OwnNamespace", namespace, targets)
    return InstallMode("SingleNamespace", targets[0], targets)


@dataclass(frozen=True)
class Installation:
    """One v0 installation: its Subscription (None once a migration deleted it), its CSV (None
    once deleted), the OperatorGroups of its namespace, its InstallPlans, and the ClusterExtension
    a migration already wrote for it (None before)."""

    namespace: str
    subscription: Mapping[str, Any] | None
    csv: Mapping[str, Any] | None
    operator_groups: Sequence[Mapping[str, Any]]
    install_plans: Sequence[Mapping[str, Any]]
    extension: Mapping[str, Any] | None = None

    @property
    def package(self) -> str:
        if self.subscription is not None:
            return str((self.subscription.get("spec") or {}).get("name") or "")
        catalog = (((self.extension or {}).get("spec") or {}).get("source") or {}).get("catalog") or {}
        return str(catalog.get("packageName") or "")

    @property
    def csv_name(self) -> str:
        if self.csv is not None:
            return str(self.csv["metadata"]["name"])
        if self.subscription is not None:
            return str((self.subscription.get("status") or {}).get("installedCSV") or "")
        # `<namespace>/<csv>` in the annotation `olmctl migrate` writes (see `assess`).
        origin = ((self.extension or {}).get("metadata", {}).get("annotations") or {}).get(
            MIGRATED_FROM_ANNOTATION
        )
        return str(origin or "/").split("/", 1)[1]

    @property
    def version(self) -> str:
        if self.csv is not None:
            return str((self.csv.get("spec") or {}).get("version") or "")
        catalog = (((self.extension or {}).get("spec") or {}).get("source") or {}).get("catalog") or {}
        return str(catalog.get("version") or "")

    @property
    def channel(self) -> str | None:
        return ((self.subscription or {}).get("spec") or {}).get("channel") or None

    @property
    def key(self) -> str:
        """`namespace/subscription` when the Subscription exists, else `namespace/csv`."""
        name = (self.subscription or {}).get("metadata", {}).get("name") or self.csv_name
        return f"{self.namespace}/{name}"


def _owner_references(obj: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list((obj.get("metadata") or {}).get("ownerReferences") or ())


def plan_of(plan: Mapping[str, Any], installation: Installation) -> bool:
    """Whether the InstallPlan `plan` is the installation's: it installs the installation's CSV, or
    the installation's Subscription is the only Subscription that owns it (a plan for an upgrade)."""
    if installation.csv_name in ((plan.get("spec") or {}).get("clusterServiceVersionNames") or ()):
        return True
    if installation.subscription is None:
        return False
    subscriptions = {str(r.get("uid")) for r in _owner_references(plan) if r.get("kind") == SUBSCRIPTION.kind}
    return subscriptions == {str(installation.subscription["metadata"].get("uid"))}


def _labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def owned_by_csv(obj: Mapping[str, Any], csv: Mapping[str, Any]) -> bool:
    uid = csv["metadata"].get("uid")
    return any(ref.get("kind") == CSV.kind and ref.get("uid") == uid for ref in _owner_references(obj))


def made_by(obj: Mapping[str, Any], installation: Installation) -> bool:
    """Whether v0 made `obj` for `installation`: owned by its CSV by reference or by label, or (a
    CRD) labelled as a component of its operator or declared owned by the CSV."""
    csv = installation.csv
    labels = _labels(obj)
    if csv is not None and owned_by_csv(obj, csv):
        return True
    # The bundle's own cluster-scoped objects carry `olm.owner` alone, without the namespace label.
    if labels.get(OWNER_LABEL) == installation.csv_name and labels.get(OWNER_NAMESPACE_LABEL) in (
        None,
        installation.namespace,
    ):
        return True
    package = installation.package
    if package and operator_label(package, installation.namespace) in labels:
        return True
    return obj.get("kind") == "CustomResourceDefinition" and (obj.get("metadata") or {}).get("name") in (
        owned_crds(csv) if csv is not None else ()
    )


def owned_crds(csv: Mapping[str, Any]) -> set[str]:
    """The CRDs `csv` declares it owns (v0 creates them with its InstallPlan, without a mark)."""
    owned = ((csv.get("spec") or {}).get("customresourcedefinitions") or {}).get("owned") or ()
    return {str(crd.get("name")) for crd in owned}


def released_metadata(obj: Mapping[str, Any], installation: Installation) -> dict[str, Any]:
    """The metadata merge-patch fields that take v0's marks off `obj`: its labels, its CRD
    annotation naming the installation and the owner reference to the CSV (empty when there are
    none)."""
    labels = _labels(obj)
    drop = [
        k for k in (*V0_LABELS, operator_label(installation.package, installation.namespace)) if k in labels
    ]
    changes: dict[str, Any] = {}
    if drop:
        changes["labels"] = dict.fromkeys(drop)
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    alongside = f"{installation.namespace}/{installation.csv_name}"
    marks = [k for k, v in annotations.items() if k.startswith(INSTALLED_ALONGSIDE_PREFIX) and v == alongside]
    if marks:
        changes["annotations"] = dict.fromkeys(marks)
    refs = _owner_references(obj)
    kept = [dict(ref) for ref in refs if ref.get("kind") != CSV.kind]
    if len(kept) != len(refs):
        changes["ownerReferences"] = kept
    return changes
