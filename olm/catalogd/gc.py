"""Garbage collection: content kept for catalogs that no longer exist is removed.

Deletion normally cleans up through the finalizer, but a catalog deleted while catalogd was down
(or with the finalizer removed by hand), or deleted while this replica was a follower that missed
the event, leaves content behind. `GarbageCollector` runs on every replica: at start (once the
caches synced) and every `interval` seconds it removes what `Content` keeps for any name that is
not a ClusterCatalog in the cache.
"""

from __future__ import annotations

import asyncio

from olm.api.kinds import CLUSTER_CATALOG
from olm.catalogd.content import Content
from olm_runtime.cache import CacheReader
from olm_runtime.logging import get_logger

DEFAULT_INTERVAL = 12 * 3600.0
_log = get_logger("catalogd.gc")


class GarbageCollector:
    """A runnable on every replica (`needs_leader_election = False`)."""

    needs_leader_election = False
    name = "catalogd-garbage-collector"

    def __init__(self, reader: CacheReader, content: Content, *, interval: float = DEFAULT_INTERVAL) -> None:
        if interval <= 0:
            raise ValueError("the garbage collection interval must be positive")
        self.reader = reader
        self.content = content
        self.interval = interval

    async def collect(self) -> list[str]:
        """Remove content of catalogs that do not exist; return their names."""
        existing = {item["metadata"]["name"] for item in await self.reader.list(CLUSTER_CATALOG)}
        removed = sorted(self.content.names() - existing)
        for name in removed:
            await self.content.remove(name)
            _log.info("gc.removed", catalog=name)
        return removed

    async def start(self) -> None:
        while True:
            try:
                await self.collect()
            except Exception:  # a failed round is retried at the next one; never stop the manager
                _log.exception("gc.failed")
            await asyncio.sleep(self.interval)
