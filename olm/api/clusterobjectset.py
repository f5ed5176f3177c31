"""ClusterObjectSet: one immutable revision of a set of objects, rolled out phase by phase.

Each phase is applied with server-side apply and must pass its readiness probes before the next
starts. Revision number, phases and collision protection never change once set; the lifecycle goes
from `Active` to `Archived` and never back. Objects are embedded inline or referenced in Secrets
(type `olm.operatorframework.io/object-data`) so large bundles fit under etcd's size limit.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from olm.api import names, rules
from olm.api.base import AGE_COLUMN, Model, Resource, ResourceInfo, condition_status_column
from olm.api.markers import EMBEDDED_RESOURCE, INT64, ListMap, Rule, object_rules
from olm.api.meta import Conditions, ProgressDeadlineMinutes
from olm.api.probes import ProgressionProbes

__all__ = [
    "ClusterObjectSet",
    "ClusterObjectSetObject",
    "ClusterObjectSetPhase",
    "ClusterObjectSetSpec",
    "ClusterObjectSetStatus",
    "CollisionProtection",
    "LifecycleState",
    "ObjectSourceRef",
    "ObservedPhase",
]


class LifecycleState(StrEnum):
    """Whether a revision is reconciled."""

    ACTIVE = "Active"
    ARCHIVED = "Archived"


class CollisionProtection(StrEnum):
    """Which pre-existing objects a revision may take over."""

    PREVENT = "Prevent"
    IF_NO_CONTROLLER = "IfNoController"
    NONE = "None"


PhaseName = Annotated[
    str,
    Field(min_length=1, max_length=63),
    rules.dns1123_label("phase name"),
]


class ObjectSourceRef(Model):
    """A key of a Secret whose value is one JSON object manifest, optionally gzip-compressed."""

    name: Annotated[str, Field(min_length=1, max_length=253)]
    """Name of the Secret."""
    namespace: Annotated[str, Field(max_length=63)] | None = None
    """Namespace of the Secret; when empty, OLM's own namespace."""
    key: Annotated[str, Field(min_length=1, max_length=253)]
    """Key in the Secret's data holding the manifest."""


class ClusterObjectSetObject(Model):
    """One object of a phase: embedded in `object` or referenced by `ref`, never both."""

    model_config = object_rules(
        Rule("has(self.object) != has(self.ref)", "exactly one of object or ref must be set")
    )

    object: Annotated[dict[str, Any], EMBEDDED_RESOURCE] | None = None
    """The complete object (apiVersion, kind, metadata, ...), kept exactly as written."""
    ref: ObjectSourceRef | None = None
    """Where the object's manifest is stored instead of inline."""
    collision_protection: CollisionProtection | None = None
    """Overrides the phase's and the spec's collision protection for this object."""


class ClusterObjectSetPhase(Model):
    """A group of objects applied together; the next phase waits until all of them are ready."""

    name: PhaseName
    """Name of the phase (such as `crds` or `deploy`), unique within the revision."""
    collision_protection: CollisionProtection | None = None
    """Overrides the spec's collision protection for the objects of this phase."""
    objects: Annotated[list[ClusterObjectSetObject], Field(min_length=1, max_length=50)]
    """The objects of the phase, 1 to 50, applied in no particular order."""


Phases = Annotated[
    list[ClusterObjectSetPhase],
    Field(max_length=20),
    ListMap("name"),
    rules.immutable("phases"),
]


class ClusterObjectSetSpec(Model):
    """The content of a revision and how to roll it out."""

    model_config = object_rules(
        Rule("has(self.phases) || !has(oldSelf.phases)", "phases is immutable and cannot be removed")
    )

    revision: Annotated[int, Field(ge=1), INT64, rules.immutable("revision")]
    """Sequence number of the revision, starting at 1 and growing by one with every new revision
    of the same owner. Immutable."""
    lifecycle_state: Annotated[
        LifecycleState,
        Rule(
            "oldSelf == 'Active' || self == oldSelf",
            "lifecycleState cannot change from Archived back to Active",
        ),
    ]
    """`Active` revisions are reconciled; more than one is active during a transition.
    `Archived` revisions release the objects a newer revision took over and delete the rest;
    an archived revision cannot become active again."""
    collision_protection: Annotated[CollisionProtection, rules.immutable("collisionProtection")]
    """Default for all objects: `Prevent` only manages objects this revision created;
    `IfNoController` also adopts existing objects no controller owns; `None` adopts any object,
    even one another controller owns. Phases and objects can override it. Immutable."""
    phases: Phases | None = None
    """The phases, applied in order, at most 20. Immutable once set."""
    progress_deadline_minutes: ProgressDeadlineMinutes | None = None
    """Minutes the rollout may take before `Progressing` turns False with reason
    `ProgressDeadlineExceeded`, from 10 to 720. When omitted, there is no deadline."""
    progression_probes: ProgressionProbes | None = None
    """Readiness checks beyond the built-in ones, applied to matching objects of every phase."""


class ObservedPhase(Model):
    """The content digest of a phase as first resolved."""

    name: PhaseName
    """Name of the phase."""
    digest: Annotated[
        str,
        Field(min_length=1, max_length=256),
        rules.matches(r"^[a-z0-9]+:[a-f0-9]+$", "digest must have the form <algorithm>:<lowercase hex>"),
    ]
    """Digest of the phase's resolved objects, such as `sha256:<hex>`."""


ObservedPhases = Annotated[
    list[ObservedPhase],
    Field(max_length=20),
    ListMap("name"),
    Rule("self == oldSelf", "observedPhases is immutable once set"),
]


class ClusterObjectSetStatus(Model):
    """What the ClusterObjectSet controller observed and did."""

    model_config = object_rules(
        Rule(
            "has(self.observedPhases) || !has(oldSelf.observedPhases)",
            "observedPhases is immutable once set and cannot be removed",
        )
    )

    conditions: Conditions | None = None
    """`Progressing`: RollingOut, Retrying, Succeeded, Blocked (needs a change, for example when
    referenced content changed), Archived, ProgressDeadlineExceeded. `Available`: whether all
    objects pass their probes (ProbesSucceeded, ProbeFailure, Reconciling, Archived, Migrated).
    `Succeeded`: set once the rollout first completed, and kept."""
    observed_phases: ObservedPhases | None = None
    """Content digests of the phases when first resolved; later content that differs (a
    referenced Secret replaced) blocks the rollout. Immutable once set."""


class ClusterObjectSet(Resource):
    """One revision of a set of objects, rolled out in phases."""

    info: ClassVar[ResourceInfo] = ResourceInfo(
        kind=names.CLUSTER_OBJECT_SET,
        plural="clusterobjectsets",
        singular="clusterobjectset",
        short_names=("cos",),
        printer_columns=(
            condition_status_column("Available"),
            condition_status_column("Progressing"),
            AGE_COLUMN,
        ),
    )

    kind: Literal["ClusterObjectSet"] = names.CLUSTER_OBJECT_SET
    spec: ClusterObjectSetSpec
    """The revision's content."""
    status: ClusterObjectSetStatus | None = None
    """The observed state, written by the ClusterObjectSet controller."""
