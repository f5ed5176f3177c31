"""Pruning the blob cache: layers and manifests no catalog needs any more are deleted.

The blob cache (`olm.oci.BlobCache` under `<storage-dir>/blobs`) keeps every manifest, config and
layer catalogd ever pulled, so that a restart or a re-unpack downloads nothing twice. Without
pruning it only grows: a catalog that moves to a new image, or is deleted, leaves its old blobs.

What is kept, every other blob is deleted:

- for each ClusterCatalog, the image its status resolved to (`status.resolvedSource.image.ref`);
- for each catalog this replica serves, the image it serves (a follower may serve an older digest
  than the status names, until it caught up);
- each of these as its manifest, config and layers; for an image index, the index and every
  manifest under it that is cached, with their configs and layers;
- whatever is being pulled or unpacked right now: `PullGate` lets any number of pulls run at
  once, or one prune alone, so a prune never removes a blob between a pull finding it in the
  cache and the unpack reading it.

A prune is crash safe: the cache only ever holds whole blobs, whenever the process dies
(`BlobCache.prune`). `gc.GarbageCollector` runs it in each of its rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from olm import oci
from olm.catalogd.unpack import resolved_image


class PullGate:
    """Shared by pulls, held alone by a prune; a waiting prune goes before pulls that come later
    (so a steady stream of pulls cannot postpone it forever)."""

    def __init__(self) -> None:
        self._changed = asyncio.Condition()
        self._pulls = 0
        self._pruning = False
        self._prunes_waiting = 0

    @contextlib.asynccontextmanager
    async def pulling(self) -> AsyncIterator[None]:
        async with self._changed:
            await self._changed.wait_for(lambda: not self._pruning and not self._prunes_waiting)
            self._pulls += 1
        try:
            yield
        finally:
            async with self._changed:
                self._pulls -= 1
                self._changed.notify_all()

    @contextlib.asynccontextmanager
    async def pruning(self) -> AsyncIterator[None]:
        async with self._changed:
            self._prunes_waiting += 1
            try:
                await self._changed.wait_for(lambda: not self._pruning and not self._pulls)
            finally:
                self._prunes_waiting -= 1
            self._pruning = True
        try:
            yield
        finally:
            async with self._changed:
                self._pruning = False
                self._changed.notify_all()


def image_digests(catalogs: Iterable[Mapping[str, Any]], served: Mapping[str, str]) -> set[oci.Digest]:
    """The manifest digests of the images catalogs resolved to and the images being served."""
    digests: set[oci.Digest] = set()
    for catalog in catalogs:
        reference = resolved_image(catalog)
        if reference is not None and reference.digest is not None:
            digests.add(reference.digest)
    for digest in served.values():
        with contextlib.suppress(oci.InvalidReference):
            digests.add(oci.Digest.parse(digest))
    return digests


def referenced(
    cache: oci.BlobCache, images: Iterable[oci.Digest], *, max_manifest_bytes: int
) -> set[oci.Digest]:
    """`images` with every blob their cached manifests name, following image indexes (blocking I/O).

    An image whose manifest is not cached contributes only its digest: without the manifest
    nothing tells which layers are its, and a pull fetches the manifest before any layer.
    """
    keep: set[oci.Digest] = set()
    pending = list(images)
    while pending:
        digest = pending.pop()
        if digest in keep:
            continue
        keep.add(digest)
        data = cache.read(digest, max_size=max_manifest_bytes)
        if data is None:
            continue
        try:
            document = oci.parse_manifest(data, None)
        except oci.RegistryError:  # a config or layer named as an image: nothing below it
            continue
        if isinstance(document, oci.ImageIndex):
            pending.extend(child.digest for child in document.manifests)
        else:
            keep.add(document.config.digest)
            keep.update(layer.digest for layer in document.layers)
    return keep
