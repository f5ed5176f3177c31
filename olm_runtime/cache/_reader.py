"""Reads served from the shared informer cache: no API call, possibly stale, never copied."""

from __future__ import annotations

import builtins

from olm_runtime.cache._cache import Cache, NotCached
from olm_runtime.cache._informer import Informer
from olm_runtime.cache._objects import Object
from olm_runtime.cache._selector import LabelSelector, parse_selector
from olm_runtime.cache._store import NAMESPACE_INDEX
from olm_runtime.client import errors
from olm_runtime.client.gvk import GroupVersionKind

__all__ = ["CacheReader"]


class CacheReader:
    """`get` and `list` answered from the cache's informers, not from the API server.

    **Staleness.** A read returns what the informer has received so far: a write this process just
    made may not be visible yet (a `get` right after a `create` can raise `NotFound`; an `update` can
    be followed by a read of the previous version), and objects may lag the server by the watch's
    latency, or by longer while the API server is unreachable. Reconcilers tolerate this by being
    level-based and by sending writes with the resourceVersion they read (a stale write then fails
    with `Conflict` and is retried). Read from `olm_runtime.client.Client` when a read must be fresh.

    **Sharing.** Results are the cached objects themselves, shared with every other reader: do not
    mutate them (they are typed `Mapping`); `cache.mutable_copy(obj)` gives a private copy.

    **Lazy informers.** The first read of a kind (in a form: full or metadata-only) creates that kind's
    informer with its configured namespaces and selectors, and waits up to
    `CacheOptions.sync_timeout` seconds for it to sync (`TimeoutError` otherwise). The cache must be
    running (`Cache.start()`).
    """

    def __init__(self, cache: Cache) -> None:
        self._cache = cache

    async def _informer(self, gvk: GroupVersionKind, namespace: str | None, metadata_only: bool) -> Informer:
        informer = await self._cache.get_informer(gvk, metadata_only=metadata_only)
        scopes = self._cache.kind_options(gvk).namespaces
        if namespace and scopes and namespace not in scopes and informer.resource.namespaced:
            raise NotCached(
                f"the cache does not watch namespace {namespace!r} for {gvk}; it watches {', '.join(scopes)}"
            )
        if not informer.has_synced:
            await informer.wait_for_sync(self._cache.options.sync_timeout)
        return informer

    async def get(
        self, gvk: GroupVersionKind, name: str, *, namespace: str | None = None, metadata_only: bool = False
    ) -> Object:
        """The cached object; raises `errors.NotFound` when the cache does not hold it."""
        informer = await self._informer(gvk, namespace, metadata_only)
        if informer.resource.namespaced and not namespace:
            raise ValueError(f"{gvk.kind} is namespaced: get {name!r} needs a namespace")
        obj = informer.get(name, namespace if informer.resource.namespaced else None)
        if obj is None:
            where = f"{namespace}/{name}" if namespace and informer.resource.namespaced else name
            raise errors.NotFound(
                404, "NotFound", f'{informer.resource.gvr.resource} "{where}" not found in the cache'
            )
        return obj

    async def list(
        self,
        gvk: GroupVersionKind,
        *,
        namespace: str | None = None,
        label_selector: str | LabelSelector | None = None,
        index: tuple[str, str] | None = None,
        metadata_only: bool = False,
    ) -> builtins.list[Object]:
        """Cached objects of a kind, optionally of one namespace, matching a label selector and
        holding `value` in the index named `index[0]` (added with `Informer.add_indexers`)."""
        informer = await self._informer(gvk, namespace, metadata_only)
        selector = parse_selector(label_selector) if isinstance(label_selector, str) else label_selector
        if not informer.resource.namespaced:
            namespace = None
        if index is None:
            return informer.list(namespace, selector)
        items = informer.by_index(*index)
        if namespace is not None and index[0] != NAMESPACE_INDEX:
            items = [o for o in items if o["metadata"].get("namespace") == namespace]
        if selector is not None and not selector.empty:
            items = [o for o in items if selector.matches_object(o)]
        return items
