"""Garbage collection: content kept for catalogs that no longer exist, and blobs no catalog needs.

Deletion normally cleans up through the finalizer, but a catalog deleted while catalogd was down
(or with the finalizer removed by hand), or deleted while this replica was a follower that missed
the event, leaves content behind. And the blob cache keeps the layers of images catalogs have
moved away from. `GarbageCollector` runs on every replica, in rounds: at start (once the caches
synced), after each successful unpack, and every `interval` seconds. A round removes what
`Content` keeps for any name that is not a ClusterCatalog in the cache, then prunes the blob
cache down to what catalogs reference (`blobprune`).
"""

from __future__ import annotations

import asyncio
import contextlib

from olm import oci
from olm.api.kinds import CLUSTER_CATALOG
from olm.catalogd import blobprune
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

    async def prune_blobs(self) -> list[oci.Digest]:
        """Delete cached blobs no catalog references; return their digests.

        Waits for pulls in progress to finish, and holds new ones back while it runs.
        """
        cache = self.content.client.cache
        max_manifest_bytes = self.content.client.options.max_manifest_bytes
        async with self.content.pulls.pruning():
            catalogs = await self.reader.list(CLUSTER_CATALOG)
            images = blobprune.image_digests(catalogs, self.content.storage.list())
            keep = await asyncio.to_thread(
                blobprune.referenced, cache, images, max_manifest_bytes=max_manifest_bytes
            )
            removed = await asyncio.to_thread(cache.prune, keep)
        if removed:
            _log.info("gc.blobs_pruned", count=len(removed), kept=len(keep))
        return removed

    async def start(self) -> None:
        unpacked = self.content.unpacked
        while True:
            unpacked.clear()  # an unpack that ends during the round asks for another one
            try:
                await self.collect()
                await self.prune_blobs()
            except Exception:  # a failed round is retried at the next one; never stop the manager
                _log.exception("gc.failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(unpacked.wait(), self.interval)
