"""Who may manage an object: ownership, collision protection and hand-over between revisions.

The rules `spec.collisionProtection` of a ClusterObjectSet stands for: the ClusterObjectSet controller
applies them at rollout, and the install pipeline's preview (`olm.pipeline.preflight`) applies the
same to say beforehand what a rollout would refuse.

A managed object carries a controller ownerReference to its revision and the revision's labels.
Before a phase is applied, every existing object of it is judged (`judge`):

- controlled by this revision: apply;
- controlled by an older sibling (another revision with the same owner labels): adopt, dropping
  the older revision's reference (hand-over moves forward only);
- controlled by a newer sibling: leave it alone, it has been handed over;
- without a controller, and kept by an earlier installation of the same package when that was
  removed (`names.RETAINED_PACKAGE_ANNOTATION`): adopt;
- otherwise the collision protection decides: `Prevent` adopts nothing, `IfNoController` adopts
  objects without a controller, `None` adopts anything (demoting the other controller's reference).

Pure functions over dicts; the rollout does the I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import ownerrefs

__all__ = [
    "Action",
    "Revision",
    "Verdict",
    "desired_object",
    "guarded_patch",
    "judge",
    "references_without",
    "retained_for",
]

Object = Mapping[str, Any]


@dataclass(frozen=True)
class Revision:
    """The parts of a ClusterObjectSet that ownership decisions need."""

    name: str
    uid: str
    number: int
    labels: Mapping[str, str]

    @property
    def owner(self) -> tuple[str, str] | None:
        kind, name = self.labels.get(names.OWNER_KIND_LABEL), self.labels.get(names.OWNER_NAME_LABEL)
        return (kind, name) if kind and name else None

    def as_owner(self) -> dict[str, Any]:
        """The revision as an owner of the objects it manages (what `ownerrefs` reads)."""
        return {
            "apiVersion": CLUSTER_OBJECT_SET.api_version,
            "kind": CLUSTER_OBJECT_SET.kind,
            "metadata": {"name": self.name, "uid": self.uid},
        }

    @classmethod
    def of(cls, cos: Object) -> Revision:
        metadata = cos.get("metadata") or {}
        return cls(
            name=str(metadata.get("name")),
            uid=str(metadata.get("uid")),
            number=int((cos.get("spec") or {}).get("revision") or 0),
            labels=dict(metadata.get("labels") or {}),
        )


class Action(enum.Enum):
    APPLY = "apply"
    """Ours already, or free to create."""
    ADOPT = "adopt"
    """Take it over; `Verdict.release` names the reference to drop or demote first."""
    SKIP = "skip"
    """A newer revision manages it now."""
    COLLISION = "collision"
    """Not ours to take under the collision protection in force."""


@dataclass(frozen=True)
class Verdict:
    action: Action
    release: Mapping[str, Any] | None = None
    """The current controller reference to remove (older sibling) or demote (foreign controller)."""
    remove: bool = False
    """Whether `release` is removed (a sibling revision) rather than demoted to a plain owner."""
    message: str = ""


def _describe(ref: Mapping[str, Any]) -> str:
    return f"{ref.get('kind')} {ref.get('name')}"


def _released_by_predecessor(live: Object, me: Revision, siblings: Mapping[str, Revision]) -> bool:
    """Whether `live` is an object an older sibling managed and let go of for `me`: handing over
    is two writes (the sibling's reference dropped, then `me` applied), so a crash between them
    leaves the object with no controller but still labelled as the sibling's, for this owner."""
    labels = (live.get("metadata") or {}).get("labels") or {}
    owner = (labels.get(names.OWNER_KIND_LABEL), labels.get(names.OWNER_NAME_LABEL))
    if me.owner is None or owner != me.owner:
        return False
    revision = labels.get(names.REVISION_NAME_LABEL)
    return any(s.name == revision and s.number < me.number for s in siblings.values())


def retained_for(live: Object, me: Revision) -> bool:
    """Whether `live` is a CRD an earlier installation of `me`'s package kept when it was removed
    (`spec.removal.policy: Retain`), which `me` may adopt whatever its collision protection."""
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    package = me.labels.get(names.PACKAGE_NAME_LABEL)
    return bool(package) and annotations.get(names.RETAINED_PACKAGE_ANNOTATION) == package


def judge(live: Object | None, me: Revision, siblings: Mapping[str, Revision], strategy: str) -> Verdict:
    """What to do with the existing object `live` (None: it does not exist).

    `siblings` maps the uid of every other revision with the same owner to that revision.
    """
    if live is None:
        return Verdict(Action.APPLY)
    controller = ownerrefs.controller_of(live)
    if controller is not None and controller.get("uid") == me.uid:
        return Verdict(Action.APPLY)
    if controller is not None and (sibling := siblings.get(str(controller.get("uid")))) is not None:
        if sibling.number > me.number:
            return Verdict(Action.SKIP)
        return Verdict(Action.ADOPT, release=controller, remove=True)
    if controller is None:
        if (
            strategy in ("IfNoController", "None")
            or _released_by_predecessor(live, me, siblings)
            or retained_for(live, me)
        ):
            return Verdict(Action.ADOPT)
        return Verdict(
            Action.COLLISION,
            message="exists and is not managed by this revision (collision protection Prevent)",
        )
    if strategy == "None":
        return Verdict(Action.ADOPT, release=controller, remove=False)
    return Verdict(
        Action.COLLISION,
        message=f"is controlled by {_describe(controller)} (collision protection {strategy})",
    )


def desired_object(manifest: Object, me: Revision) -> dict[str, Any]:
    """The apply configuration of `manifest` as managed by `me`: its own fields, plus the
    revision's owner labels, the revision-name label and the controller reference."""
    obj = dict(manifest)
    metadata = dict(obj.get("metadata") or {})
    labels = dict(metadata.get("labels") or {})
    for key in (names.OWNER_KIND_LABEL, names.OWNER_NAME_LABEL):
        if key in me.labels:
            labels[key] = me.labels[key]
    labels[names.REVISION_NAME_LABEL] = me.name
    metadata["labels"] = labels
    metadata["ownerReferences"] = []  # the revision's is the only reference it applies
    for server_field in ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation"):
        metadata.pop(server_field, None)
    obj["metadata"] = metadata
    obj.pop("status", None)
    if _aggregated_cluster_role(obj):
        # The control plane's aggregation controller writes such a role's rules. Applied, the
        # manifest's (mostly `rules: []`) would take them back on every reconcile and the role
        # would flap between empty and aggregated, each write bringing the next reconcile.
        obj.pop("rules", None)
    ownerrefs.set_controller_reference(me.as_owner(), obj)
    return obj


def _aggregated_cluster_role(obj: Object) -> bool:
    return (
        obj.get("kind") == "ClusterRole"
        and str(obj.get("apiVersion", "")).startswith("rbac.authorization.k8s.io/")
        and bool(obj.get("aggregationRule"))
    )


def already_applied(desired: Object, live: Object | None, me: Revision) -> bool:
    """Whether applying `desired` would change nothing: `live` is controlled by `me` and holds
    every field of `desired` with the same value. Lists must match element by element (each live
    element may carry more fields, such as server defaults). When unsure this says no, and the
    caller applies; fields `me` no longer wants are dropped by that first apply of each revision,
    which always happens because a new revision is not yet the object's controller."""
    if live is None:
        return False
    controller = ownerrefs.controller_of(live)
    if controller is None or controller.get("uid") != me.uid:
        return False
    desired_fields = {k: v for k, v in desired.items() if k not in ("apiVersion", "kind")}
    metadata = desired_fields.get("metadata") or {}
    if "namespace" in metadata and not (live.get("metadata") or {}).get("namespace"):
        # A rendered cluster-scoped object may name a namespace (webhook configurations do, as
        # upstream renders them); the API server drops it, so it never reads back.
        desired_fields["metadata"] = {k: v for k, v in metadata.items() if k != "namespace"}
    return _contained(desired_fields, live)


def _contained(want: Any, have: Any) -> bool:
    if isinstance(want, Mapping):
        return isinstance(have, Mapping) and all(
            k in have and _contained(v, have[k]) for k, v in want.items()
        )
    if isinstance(want, list):
        return (
            isinstance(have, list)
            and len(want) == len(have)
            and all(_contained(w, h) for w, h in zip(want, have, strict=True))
        )
    if isinstance(want, bool) or isinstance(have, bool):
        return want is have
    if isinstance(want, int | float) and isinstance(have, int | float):
        return want == have  # JSON does not tell 1 from 1.0
    return type(want) is type(have) and bool(want == have)


def guarded_patch(live: Object, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON merge patch of the `metadata` fields given (`None` removes a key, a list replaces the
    list) that the API server applies only while the object is still `live`: its resourceVersion is
    the precondition, so a decision made on `live` never lands on a changed object."""
    return {"metadata": {"resourceVersion": (live.get("metadata") or {}).get("resourceVersion"), **metadata}}


def references_without(
    refs: Sequence[Mapping[str, Any]], uid: str, *, demote: bool = False
) -> list[dict[str, Any]]:
    """`refs` without the reference to `uid`, or with it kept as a plain owner when `demote`."""
    result: list[dict[str, Any]] = []
    for ref in refs:
        if ref.get("uid") != uid:
            result.append(dict(ref))
        elif demote:
            result.append({**ref, "controller": False, "blockOwnerDeletion": False})
    return result
