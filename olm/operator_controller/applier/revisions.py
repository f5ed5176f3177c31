"""An extension's revisions (ClusterObjectSets): reading their state, creating the next one safely,
sweeping Secrets a crash left behind, and pruning old archived revisions beyond the retention limit.

Creation order, chosen so a crash at any point leaves nothing that is never cleaned up:

1. the content Secrets (immutable, content-addressed names: creating one that exists is a no-op);
2. the ClusterObjectSet `<extension>-<n+1>`, owned by the extension;
3. ownerReferences from each Secret to the ClusterObjectSet, so the garbage collector deletes them
   with it.

A crash after 1 leaves Secrets labelled with a revision that does not exist: `sweep` deletes them
(unless the revision about to be created reuses them). A crash after 2 leaves Secrets without an
owner: `sweep` adds it.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from olm.api import conditions as api
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller.applier.secrets import PackedRevision
from olm_runtime import conditions, ownerrefs
from olm_runtime.client import Client, PatchType, errors, kinds

__all__ = [
    "BundleRef",
    "Revision",
    "RevisionStates",
    "content_digest",
    "create_revision",
    "delete_secrets",
    "owner_selector",
    "prune_archived",
    "states",
    "sweep",
]


@dataclass(frozen=True, kw_only=True)
class BundleRef:
    """The bundle a revision was rendered from, as its annotations say."""

    package: str
    name: str
    version: str
    image: str


@dataclass(frozen=True, kw_only=True)
class Revision:
    name: str
    number: int
    archived: bool
    succeeded: bool
    bundle: BundleRef | None
    digest: str
    object: Mapping[str, Any]

    @property
    def conditions(self) -> list[dict[str, Any]]:
        return list((self.object.get("status") or {}).get("conditions") or [])

    @classmethod
    def of(cls, cos: Mapping[str, Any]) -> Revision:
        metadata = cos.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        spec = cos.get("spec") or {}
        bundle = None
        if annotations.get(names.BUNDLE_REFERENCE_ANNOTATION):
            bundle = BundleRef(
                package=annotations.get(names.PACKAGE_NAME_LABEL, ""),
                name=annotations.get(names.BUNDLE_NAME_LABEL, ""),
                version=annotations.get(names.BUNDLE_VERSION_LABEL, ""),
                image=annotations[names.BUNDLE_REFERENCE_ANNOTATION],
            )
        status_conditions = (cos.get("status") or {}).get("conditions") or []
        return cls(
            name=metadata.get("name", ""),
            number=int(spec.get("revision") or 0),
            archived=spec.get("lifecycleState") == "Archived",
            succeeded=conditions.is_true(status_conditions, api.TYPE_SUCCEEDED),
            bundle=bundle,
            digest=annotations.get(names.CONTENT_DIGEST_ANNOTATION, ""),
            object=cos,
        )


@dataclass(frozen=True, kw_only=True)
class RevisionStates:
    """All revisions of one extension, oldest first, and what they mean."""

    all: tuple[Revision, ...]

    @property
    def active(self) -> tuple[Revision, ...]:
        return tuple(r for r in self.all if not r.archived)

    @property
    def installed(self) -> Revision | None:
        """The newest active revision that has rolled out once (its `Succeeded` latch is set)."""
        done = [r for r in self.active if r.succeeded]
        return done[-1] if done else None

    @property
    def latest(self) -> Revision | None:
        """The newest active revision: what the extension is converging to."""
        active = self.active
        return active[-1] if active else None

    @property
    def next_number(self) -> int:
        return max((r.number for r in self.all), default=0) + 1


def owner_selector(extension: str) -> str:
    return f"{names.OWNER_KIND_LABEL}={names.CLUSTER_EXTENSION},{names.OWNER_NAME_LABEL}={extension}"


def states(objects: Iterable[Mapping[str, Any]], extension_uid: str) -> RevisionStates:
    """The revisions among `objects` controlled by the extension with `extension_uid`."""
    mine = [
        Revision.of(cos)
        for cos in objects
        if (controller := ownerrefs.controller_of(cos)) is not None and controller.get("uid") == extension_uid
    ]
    return RevisionStates(all=tuple(sorted(mine, key=lambda r: r.number)))


def content_digest(packed: PackedRevision, progress_deadline_minutes: int | None) -> str:
    """What identifies a revision's content: its phases and the content-addressed keys in order."""
    layout = [[phase.name, [ref.key for ref in phase.refs]] for phase in packed.phases]
    data = orjson.dumps({"phases": layout, "progressDeadlineMinutes": progress_deadline_minutes})
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _revision_reference(cos: Mapping[str, Any]) -> dict[str, Any]:
    """A Secret's reference to its revision: an owner for the garbage collector, not a controller
    (the runtime's helper makes controllers only)."""
    metadata = cos["metadata"]
    return {
        "apiVersion": CLUSTER_OBJECT_SET.api_version,
        "kind": CLUSTER_OBJECT_SET.kind,
        "name": metadata["name"],
        "uid": metadata["uid"],
        "controller": False,
        "blockOwnerDeletion": True,
    }


async def create_revision(
    client: Client,
    extension: Mapping[str, Any],
    number: int,
    packed: PackedRevision,
    *,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    progress_deadline_minutes: int | None,
    after_secrets: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Create Secrets, then the ClusterObjectSet, then the Secrets' ownerReferences (see module).

    `after_secrets` runs between the first two steps (tests use it to crash the process there)."""
    name = f"{extension['metadata']['name']}-{number}"
    for secret in packed.secrets:
        with contextlib.suppress(errors.AlreadyExists):
            await client.create(secret)
    if after_secrets is not None:
        after_secrets()
    spec: dict[str, Any] = {
        "lifecycleState": "Active",
        "revision": number,
        "collisionProtection": "Prevent",
        "phases": [phase.spec() for phase in packed.phases],
    }
    if progress_deadline_minutes is not None:
        spec["progressDeadlineMinutes"] = progress_deadline_minutes
    cos: dict[str, Any] = {
        "apiVersion": CLUSTER_OBJECT_SET.api_version,
        "kind": CLUSTER_OBJECT_SET.kind,
        "metadata": {"name": name, "labels": dict(labels), "annotations": dict(annotations)},
        "spec": spec,
    }
    ownerrefs.set_controller_reference(extension, cos)
    created = await client.create(cos)
    for secret in packed.secrets:
        await _own(client, secret, created)
    return created


async def _own(client: Client, secret: Mapping[str, Any], cos: Mapping[str, Any]) -> None:
    metadata = secret["metadata"]
    reference = _revision_reference(cos)
    if any(ref.get("uid") == reference["uid"] for ref in ownerrefs.owner_references(secret)):
        return
    with contextlib.suppress(errors.NotFound):
        await client.patch(
            kinds.SECRET,
            metadata["name"],
            {"metadata": {"ownerReferences": [reference]}},
            namespace=metadata["namespace"],
            patch_type=PatchType.MERGE,
        )


@dataclass(frozen=True, kw_only=True)
class SweepResult:
    deleted: tuple[str, ...] = ()
    adopted: tuple[str, ...] = ()


async def sweep(
    client: Client,
    extension: str,
    revisions: Sequence[Revision],
    *,
    system_namespace: str,
    keep: Iterable[str] = (),
) -> SweepResult:
    """Delete the extension's Secrets whose revision does not exist (except those in `keep`, which
    the revision being created reuses) and add the missing ownerReference to the others."""
    existing = {r.name: r.object for r in revisions}
    kept = set(keep)
    deleted: list[str] = []
    adopted: list[str] = []
    secrets = await client.list(
        kinds.SECRET, namespace=system_namespace, label_selector=owner_selector(extension)
    )
    for secret in secrets.items:
        metadata = secret.get("metadata") or {}
        name = metadata.get("name", "")
        revision = (metadata.get("labels") or {}).get(names.REVISION_NAME_LABEL, "")
        cos = existing.get(revision)
        if cos is None:
            if name not in kept:
                with contextlib.suppress(errors.NotFound):
                    await client.delete(kinds.SECRET, name, namespace=system_namespace)
                deleted.append(name)
        elif not ownerrefs.owner_references(secret):
            await _own(client, secret, cos)
            adopted.append(name)
    return SweepResult(deleted=tuple(sorted(deleted)), adopted=tuple(sorted(adopted)))


async def delete_secrets(
    client: Client, extension: str, revision_names: Sequence[str], *, system_namespace: str
) -> list[str]:
    """Delete the Secrets of the named revisions, which were deleted. Their ownerReferences let the
    garbage collector do it too, but it can be slow to notice (minutes, when it met the
    ClusterObjectSet kind before its discovery did); revision names are never reused."""
    if not revision_names:
        return []
    selector = f"{owner_selector(extension)},{names.REVISION_NAME_LABEL} in ({','.join(revision_names)})"
    listed = await client.list(kinds.SECRET, namespace=system_namespace, label_selector=selector)
    deleted = []
    for secret in listed.items:
        name = (secret.get("metadata") or {}).get("name", "")
        with contextlib.suppress(errors.NotFound):
            await client.delete(kinds.SECRET, name, namespace=system_namespace)
        deleted.append(name)
    return sorted(deleted)


async def prune_archived(client: Client, revisions: Sequence[Revision], limit: int) -> list[str]:
    """Delete archived revisions beyond the newest `limit` ones; active revisions are never touched."""
    archived = [r for r in revisions if r.archived]
    doomed = archived[: max(0, len(archived) - limit)]
    for revision in doomed:
        with contextlib.suppress(errors.NotFound):
            await client.delete(CLUSTER_OBJECT_SET, revision.name)
    return [r.name for r in doomed]
