"""An extension's revisions (ClusterObjectSets): creating the next one safely, sweeping Secrets a
crash left behind, and pruning old archived revisions beyond the retention limit. What their state
means (installed, latest, the bundle each came from) is read with `olm.api.revisions`.

Creation order, chosen so a crash at any point leaves nothing that is never cleaned up:

1. the content Secrets (immutable, content-addressed names: creating one that exists is a no-op);
2. the ClusterObjectSet `<extension>-<n+1>`, owned by the extension, with the teardown finalizer
   its controller would add first thing (one write and one reconcile fewer per install);
3. ownerReferences from each Secret to the ClusterObjectSet, so the garbage collector deletes them
   with it.

A crash after 1 leaves Secrets labelled with a revision that does not exist: `sweep` deletes them
(unless the revision about to be created reuses them). A crash after 2 leaves Secrets without an
owner: `sweep` adds it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.api.revisions import Revision, owner_selector
from olm.operator_controller.applier.secrets import PackedRevision, decode_object
from olm_runtime import ownerrefs
from olm_runtime.client import Client, PatchType, errors, kinds

__all__ = [
    "content_digest",
    "create_revision",
    "delete_secrets",
    "prune_archived",
    "revision_objects",
    "sweep",
]


def content_digest(packed: PackedRevision, progress_deadline_minutes: int | None) -> str:
    """What identifies a revision's content: its phases and the content-addressed keys in order."""
    layout = [[phase.name, [ref.key for ref in phase.refs]] for phase in packed.phases]
    data = orjson.dumps({"phases": layout, "progressDeadlineMinutes": progress_deadline_minutes})
    return "sha256:" + hashlib.sha256(data).hexdigest()


async def revision_objects(
    client: Client, cos: Mapping[str, Any], phase: str | None = None, *, system_namespace: str
) -> list[dict[str, Any]]:
    """The objects of a revision (of one `phase`, or all in rollout order), read back from the
    Secrets `pack` wrote (inline objects as they are; a ref without a namespace is in
    `system_namespace`). Raises `errors.NotFound` when a Secret is gone."""
    secrets: dict[tuple[str, str], Mapping[str, Any]] = {}
    objects: list[dict[str, Any]] = []
    for entry in (cos.get("spec") or {}).get("phases") or ():
        if phase is not None and entry.get("name") != phase:
            continue
        for item in entry.get("objects") or ():
            if item.get("object") is not None:
                objects.append(dict(item["object"]))
                continue
            ref = item.get("ref") or {}
            where = (str(ref.get("namespace") or system_namespace), str(ref.get("name") or ""))
            if where not in secrets:
                secrets[where] = await client.get(kinds.SECRET, where[1], namespace=where[0])
            objects.append(decode_object(base64.b64decode((secrets[where].get("data") or {})[ref["key"]])))
    return objects


def _revision_reference(cos: Mapping[str, Any]) -> dict[str, Any]:
    """A Secret's reference to its revision, as its controller, as upstream writes it (written out
    here because it is patched onto a Secret that exists, not applied with it)."""
    metadata = cos["metadata"]
    return {
        "apiVersion": CLUSTER_OBJECT_SET.api_version,
        "kind": CLUSTER_OBJECT_SET.kind,
        "name": metadata["name"],
        "uid": metadata["uid"],
        "controller": True,
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
    # Each step's writes go out together: a bundle of large CRDs packs into several Secrets, and one
    # after the other they were a good part of the time before its revision existed.
    await asyncio.gather(*(_create_secret(client, secret) for secret in packed.secrets))
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
        "metadata": {
            "name": name,
            "labels": dict(labels),
            "annotations": dict(annotations),
            "finalizers": [names.TEARDOWN_FINALIZER],
        },
        "spec": spec,
    }
    ownerrefs.set_controller_reference(extension, cos)
    created = await client.create(cos)
    await asyncio.gather(*(_own(client, secret, created) for secret in packed.secrets))
    return created


async def _create_secret(client: Client, secret: Mapping[str, Any]) -> None:
    with contextlib.suppress(errors.AlreadyExists):
        await client.create(secret)


def _owned(secret: Mapping[str, Any], cos: Mapping[str, Any]) -> bool:
    """Whether `secret` carries the reference `_revision_reference` makes (an older OLM wrote it
    with `controller: false`)."""
    wanted = _revision_reference(cos)
    return any(
        ref.get("uid") == wanted["uid"] and ref.get("controller") is True
        for ref in ownerrefs.owner_references(secret)
    )


async def _own(client: Client, secret: Mapping[str, Any], cos: Mapping[str, Any]) -> None:
    metadata = secret["metadata"]
    reference = _revision_reference(cos)
    if _owned(secret, cos):
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
    the revision being created reuses) and give the others their revision's controller reference
    where it is missing or an older OLM wrote it as a plain owner."""
    existing = {r.name: r.object for r in revisions}
    kept = set(keep)
    deleted: list[str] = []
    adopted: list[str] = []
    # From the API server's watch cache as it stands (resourceVersion 0), not a consistent read: the
    # Secrets this looks for were left by an earlier process or reconcile, which the cache has seen,
    # and a consistent list waits for the cache to catch up with etcd first (50-80 ms measured on
    # every install but the first, a tenth of kube-green's). Their metadata is all this needs: the
    # content (up to a MiB a Secret) stays on the server, and a restart reads each revision's once.
    secrets = await client.list(
        kinds.SECRET,
        namespace=system_namespace,
        label_selector=owner_selector(extension),
        resource_version="0",
        metadata_only=True,
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
        elif not _owned(secret, cos):
            # No reference (a crash between the Secret and its revision), or the one an older OLM
            # wrote (`controller: false`): set it, in place.
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
    listed = await client.list(
        kinds.SECRET, namespace=system_namespace, label_selector=selector, metadata_only=True
    )
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
