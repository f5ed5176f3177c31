"""Adding and removing finalizers without clobbering other writers.

Both functions patch `metadata.finalizers` with the object's `resourceVersion` as a precondition,
so a concurrent change raises `errors.Conflict` (retried by the workqueue) instead of silently
dropping another controller's finalizer. They return the updated object, or the given one
unchanged when there was nothing to do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm_runtime.client.client import Client
from olm_runtime.client.gvk import GroupVersionKind
from olm_runtime.client.options import PatchType


def has_finalizer(obj: Mapping[str, Any], finalizer: str) -> bool:
    return finalizer in ((obj.get("metadata") or {}).get("finalizers") or ())


def is_being_deleted(obj: Mapping[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


async def _set(
    client: Client, gvk: GroupVersionKind, obj: Mapping[str, Any], finalizers: list[str]
) -> dict[str, Any]:
    metadata = obj["metadata"]
    patch = {"metadata": {"finalizers": finalizers, "resourceVersion": metadata["resourceVersion"]}}
    return await client.patch(
        gvk, metadata["name"], patch, namespace=metadata.get("namespace"), patch_type=PatchType.MERGE
    )


async def ensure_finalizer(
    client: Client, gvk: GroupVersionKind, obj: Mapping[str, Any], finalizer: str
) -> Mapping[str, Any]:
    if has_finalizer(obj, finalizer):
        return obj
    current = list((obj.get("metadata") or {}).get("finalizers") or ())
    return await _set(client, gvk, obj, [*current, finalizer])


async def remove_finalizer(
    client: Client, gvk: GroupVersionKind, obj: Mapping[str, Any], finalizer: str
) -> Mapping[str, Any]:
    if not has_finalizer(obj, finalizer):
        return obj
    current = list((obj.get("metadata") or {}).get("finalizers") or ())
    return await _set(client, gvk, obj, [f for f in current if f != finalizer])
