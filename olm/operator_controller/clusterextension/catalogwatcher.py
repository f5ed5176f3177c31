"""Which extensions a catalog change concerns.

`CatalogWatcher` reconciles ClusterCatalogs for the ClusterExtension controller: when a catalog's
served digest, labels, priority or availability change, it asks catalogd for the package names of
the new content (one small `metas` query) and re-enqueues only the extensions whose package the
catalog holds now or held before. When the names cannot be read it re-enqueues every extension.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from olm.api import conditions as api
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION
from olm.pipeline.catalogs._client import CatalogClient, CatalogRef
from olm.pipeline.catalogs._errors import CatalogClientError, CatalogNotServing
from olm_runtime import cache, conditions, controller
from olm_runtime.client import errors
from olm_runtime.controller.event import GenericEvent

__all__ = ["CatalogWatcher", "affected_packages"]

_log = structlog.get_logger("olm.operator_controller.clusterextension.catalogwatcher")


@dataclass(frozen=True)
class _Seen:
    fingerprint: tuple[Any, ...]
    packages: frozenset[str] | None


def _fingerprint(catalog: Mapping[str, Any]) -> tuple[Any, ...]:
    metadata = catalog.get("metadata") or {}
    spec = catalog.get("spec") or {}
    status = catalog.get("status") or {}
    serving = conditions.is_true(status.get("conditions") or (), api.TYPE_SERVING)
    image = ((status.get("resolvedSource") or {}).get("image") or {}).get("ref")
    labels = tuple(sorted((metadata.get("labels") or {}).items()))
    return (serving, image, labels, spec.get("priority"), spec.get("availabilityMode"))


def affected_packages(before: frozenset[str] | None, now: frozenset[str] | None) -> frozenset[str] | None:
    """The packages whose extensions a catalog change concerns: those it held before and those it
    holds now; None (every extension) when either side is unknown."""
    if before is None or now is None:
        return None
    return before | now


class CatalogWatcher:
    """Reconciles ClusterCatalogs into events for the ClusterExtensions they concern."""

    def __init__(self, reader: cache.CacheReader, client: CatalogClient, events: asyncio.Queue[GenericEvent]):
        self.reader = reader
        self.client = client
        self.events = events
        self._seen: dict[str, _Seen] = {}

    async def reconcile(self, request: controller.Request) -> controller.Result:
        before = self._seen.get(request.name)
        try:
            catalog = await self.reader.get(CLUSTER_CATALOG, request.name)
        except errors.NotFound:
            self._seen.pop(request.name, None)
            self.client.forget(request.name)
            await self._enqueue(before.packages if before is not None else None)
            return controller.Result()
        fingerprint = _fingerprint(catalog)
        if before is not None and before.fingerprint == fingerprint:
            return controller.Result()
        packages = await self._packages(catalog)
        self._seen[request.name] = _Seen(fingerprint, packages)
        await self._enqueue(
            affected_packages(before.packages if before is not None else frozenset(), packages)
        )
        return controller.Result()

    async def _packages(self, catalog: Mapping[str, Any]) -> frozenset[str] | None:
        try:
            ref = CatalogRef.from_cluster_catalog(catalog)
        except CatalogNotServing:
            return frozenset()  # serves nothing now; extensions of the packages it held are enqueued
        try:
            return await self.client.package_names(ref)
        except CatalogClientError as err:
            _log.info("package names unavailable", catalog=ref.name, error=str(err))
            return None

    async def _enqueue(self, packages: frozenset[str] | None) -> None:
        """Enqueue extensions of `packages`; None means all of them."""
        count = 0
        for extension in await self.reader.list(CLUSTER_EXTENSION):
            source = ((extension.get("spec") or {}).get("source") or {}).get("catalog") or {}
            if packages is None or source.get("packageName") in packages:
                self.events.put_nowait(GenericEvent(extension))
                count += 1
        _log.debug("extensions enqueued after a catalog change", count=count, all=packages is None)
