"""Releasing a revision's objects: when it is archived or deleted.

Phases are walked in reverse order. An object this revision controls is deleted; an object another
revision (or anyone else) now controls only loses this revision's ownerReference. A phase whose
deletions are still in progress (finalizers) stops the walk: the earlier phases wait, so for
example CRDs outlive the workloads that use them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from olm.api import ownership
from olm.operator_controller.clusterobjectset.sources import ResolvedPhase
from olm_runtime import ownerrefs
from olm_runtime.client import Client, NoKindMatch, PatchType, errors
from olm_runtime.client.client import object_kind

__all__ = ["release_all"]


def _is_gone(answer: Mapping[str, Any]) -> bool:
    return answer.get("kind") == "Status" or not (answer.get("metadata") or {}).get("deletionTimestamp")


async def release_all(client: Client, me: ownership.Revision, phases: Sequence[ResolvedPhase]) -> bool:
    """Delete or release every object of `phases`; True once nothing of this revision remains."""
    for phase in reversed(phases):
        pending = False
        for source in phase.objects:
            manifest = source.manifest
            metadata = manifest.get("metadata") or {}
            name, namespace = str(metadata.get("name") or ""), metadata.get("namespace") or None
            try:
                gvk = object_kind(manifest)
                info = await client.resource_for(gvk)
            except (ValueError, NoKindMatch):
                continue  # its kind is gone, and so is the object
            namespace = namespace if info.namespaced else None
            try:
                live = await client.get(gvk, name, namespace=namespace)
            except errors.NotFound:
                continue
            controller = ownerrefs.controller_of(live)
            if controller is not None and controller.get("uid") == me.uid:
                if (live.get("metadata") or {}).get("deletionTimestamp"):
                    pending = True
                    continue
                try:
                    answer = await client.delete(gvk, name, namespace=namespace)
                except errors.NotFound:
                    continue
                pending = pending or not _is_gone(answer)
                continue
            refs = ownerrefs.owner_references(live)
            if any(r.get("uid") == me.uid for r in refs):
                patch = [
                    {
                        "op": "test",
                        "path": "/metadata/resourceVersion",
                        "value": live["metadata"]["resourceVersion"],
                    },
                    {
                        "op": "replace",
                        "path": "/metadata/ownerReferences",
                        "value": ownership.references_without(refs, me.uid),
                    },
                ]
                await client.patch(gvk, name, patch, namespace=namespace, patch_type=PatchType.JSON)
        if pending:
            return False
    return True
