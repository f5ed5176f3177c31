"""An index of the ClusterObjectSet informer by owner, for both controllers.

Each reconcile of an extension reads its revisions, and each of a revision its siblings. Selected by
label from the whole cache, that is a scan of every revision in the cluster: with N extensions a
restart reconciles them all, N scans of N objects. The index makes each read the owner's few; its
key holds the same owner labels the selectors did, so nothing is filtered after it.
"""

from __future__ import annotations

from olm.api import ownership
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.cache import Cache, Object

__all__ = ["INDEX", "add_index", "key", "owner_keys"]

INDEX = "olm.operatorframework.io/owner"


def key(kind: str, name: str) -> str:
    """The index value of the revisions owned by the `kind` object `name`."""
    return f"{kind}/{name}"


def owner_keys(obj: Object) -> list[str]:
    owner = ownership.Revision.of(obj).owner
    return [] if owner is None else [key(*owner)]


async def add_index(cache: Cache) -> None:
    """Index the ClusterObjectSet informer by owner, unless the other controller did already."""
    informer = await cache.get_informer(CLUSTER_OBJECT_SET)
    if not informer.store.has_index(INDEX):
        informer.add_indexers({INDEX: owner_keys})
