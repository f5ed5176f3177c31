"""An index of the ClusterObjectSet informer by owner, for both controllers.

Each reconcile of an extension reads its revisions, and each of a revision its siblings. Selected by
label from the whole cache, that is a scan of every revision in the cluster: with N extensions a
restart reconciles them all, N scans of N objects. The index makes each read the owner's few.
"""

from __future__ import annotations

from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.cache import Cache, Object

__all__ = ["INDEX", "add_index", "key", "owner_keys"]

INDEX = "olm.operatorframework.io/owner"


def key(kind: str, name: str) -> str:
    """The index value of the revisions owned by the `kind` object `name`."""
    return f"{kind}/{name}"


def owner_keys(obj: Object) -> list[str]:
    labels = obj["metadata"].get("labels") or {}
    kind, name = labels.get(names.OWNER_KIND_LABEL), labels.get(names.OWNER_NAME_LABEL)
    return [key(kind, name)] if kind and name else []


async def add_index(cache: Cache) -> None:
    """Index the ClusterObjectSet informer by owner, unless the other controller did already."""
    informer = await cache.get_informer(CLUSTER_OBJECT_SET)
    if not informer.store.has_index(INDEX):
        informer.add_indexers({INDEX: owner_keys})
