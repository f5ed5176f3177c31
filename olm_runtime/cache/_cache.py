"""The shared informer cache: one informer per watch, started on first use, shared process-wide."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from olm_runtime.cache._informer import Informer, InformerStatistics
from olm_runtime.cache._metrics import CACHE, CacheMetrics
from olm_runtime.cache._objects import Transform, freeze
from olm_runtime.cache._options import CacheOptions, KindOptions
from olm_runtime.cache._reflector import WatchTransport
from olm_runtime.cache._selector import parse_selector
from olm_runtime.client.gvk import GroupVersionKind, ResourceInfo
from olm_runtime.clock import REAL, Clock

__all__ = ["Cache", "NotCached", "ResourceMapper"]

_log = structlog.get_logger("olm_runtime.cache")
_gc_frozen = False


class ResourceMapper(Protocol):
    """What the cache needs from `olm_runtime.client.restmapper.RESTMapper`."""

    async def resource_for(self, gvk: GroupVersionKind) -> ResourceInfo: ...


class NotCached(LookupError):
    """The cache is configured not to hold what was asked for (e.g. a namespace it does not watch)."""


@dataclass(frozen=True)
class _Key:
    gvk: GroupVersionKind
    namespaces: tuple[str, ...]
    label_selector: str
    field_selector: str
    metadata_only: bool


def freeze_gc_once() -> bool:
    """Move every live object into the collector's permanent generation, once per process.

    Young garbage is collected first (cheap), so little garbage is frozen; a full collection is
    skipped because on a large heap it would block the event loop. Returns whether it froze now.
    """
    global _gc_frozen  # noqa: PLW0603 - the freeze is process-wide by nature
    if _gc_frozen:
        return False
    _gc_frozen = True
    gc.collect(1)
    gc.freeze()
    _log.info("garbage collector frozen after the initial cache sync", frozen_objects=gc.get_freeze_count())
    return True


class Cache:
    """Informers shared by every controller and reader of a process.

    `get_informer` returns the one informer for a (kind, namespaces, label selector, field selector,
    metadata-only) combination, creating it on first use; arguments left `None` take the kind's
    configured defaults (`CacheOptions`, `KindOptions`). Informers run inside `start()`, a long-running
    coroutine that blocks until cancelled and owns every informer task in one `asyncio.TaskGroup`;
    informers asked for before `start()` begin when it does, later ones at once.

    Reads go through `CacheReader`. Equivalent lower-level parts: `Informer` (one watch, its store and
    handlers), `Reflector` (list and watch into any sink), `Store` (indexes).
    """

    def __init__(
        self,
        transport: WatchTransport,
        mapper: ResourceMapper,
        options: CacheOptions | None = None,
        *,
        clock: Clock = REAL,
        metrics: CacheMetrics = CACHE,
    ) -> None:
        """`metrics` is where the informers' health is reported (default: the runtime's registry)."""
        self._transport = transport
        self._mapper = mapper
        self.options = options or CacheOptions()
        self._clock = clock
        self._informers: dict[_Key, Informer] = {}
        self._tasks: asyncio.TaskGroup | None = None
        self._running: dict[_Key, asyncio.Task[None]] = {}
        self._started = False
        self._created = asyncio.Event()
        metrics.register(self)

    # Informers -------------------------------------------------------------------------------

    def kind_options(self, gvk: GroupVersionKind) -> KindOptions:
        """The effective options of a kind: its `by_kind` entry completed with the cache defaults."""
        own = self.options.by_kind.get(gvk, KindOptions())
        defaults = self.options
        return KindOptions(
            namespaces=defaults.namespaces if own.namespaces is None else own.namespaces,
            label_selector=defaults.label_selector if own.label_selector is None else own.label_selector,
            field_selector=defaults.field_selector if own.field_selector is None else own.field_selector,
            transform=own.transform or defaults.transform,
            resync_period=defaults.resync_period if own.resync_period is None else own.resync_period,
            compact=defaults.compact if own.compact is None else own.compact,
        )

    async def get_informer(
        self,
        gvk: GroupVersionKind,
        *,
        namespaces: Iterable[str] | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
    ) -> Informer:
        """The shared informer for this watch, created (and started, if the cache runs) on first use.

        `None` arguments take the kind's configured values; `namespaces=()` watches all namespaces.
        Raises `olm_runtime.client.restmapper.NoKindMatch` if the server does not serve the kind.
        """
        kind = self.kind_options(gvk)
        resource = await self._mapper.resource_for(gvk)
        chosen = kind.namespaces if namespaces is None else tuple(namespaces)
        key = _Key(
            gvk=gvk,
            namespaces=tuple(sorted(set(chosen or ()))) if resource.namespaced else (),
            label_selector=_canonical_labels(
                kind.label_selector if label_selector is None else label_selector
            ),
            field_selector=(kind.field_selector if field_selector is None else field_selector) or "",
            metadata_only=metadata_only,
        )
        informer = self._informers.get(key)
        if informer is None:
            informer = Informer(
                self._transport,
                resource,
                namespaces=key.namespaces or None,
                label_selector=key.label_selector or None,
                field_selector=key.field_selector or None,
                metadata_only=metadata_only,
                transform=self._transform(kind),
                resync_period=kind.resync_period or None,
                reflector_options=self.options.reflector,
                clock=self._clock,
                compact=bool(kind.compact),
            )
            self._informers[key] = informer
            self._created.set()
            _log.debug("informer created", informer=informer.name)
            if self._tasks is not None:
                self._launch(key, informer)
        return informer

    def _transform(self, kind: KindOptions) -> Transform | None:
        """The kind's transform, then freezing when the cache freezes objects; never for a compact
        kind, whose every read is a private copy."""
        transform = kind.transform
        if not self.options.freeze_objects or kind.compact:
            return transform
        if transform is None:
            return _freeze_dict

        def transform_then_freeze(obj: dict[str, Any]) -> dict[str, Any]:
            return _freeze_dict(transform(obj))

        return transform_then_freeze

    def informers(self) -> list[Informer]:
        """Every informer created so far."""
        return list(self._informers.values())

    def remove_informer(self, informer: Informer) -> bool:
        """Stop `informer` and forget it; the next `get_informer` for its watch creates a new one.

        For watches a process needs only for a while (e.g. one kind per object a controller
        manages). Handlers registered on it get no more events and readers holding it see its store
        frozen; return False if this cache did not hold it.
        """
        key = next((k for k, i in self._informers.items() if i is informer), None)
        if key is None:
            return False
        del self._informers[key]
        task = self._running.pop(key, None)
        if task is not None:
            task.cancel()
        _log.debug("informer removed", informer=informer.name)
        return True

    # Running ---------------------------------------------------------------------------------

    async def start(self) -> None:
        """Run every informer, present and future, until cancelled (a Runnable). Starts only once."""
        if self._started:
            raise RuntimeError("the cache was already started")
        self._started = True
        try:
            async with asyncio.TaskGroup() as tasks:
                self._tasks = tasks
                for key, informer in list(self._informers.items()):
                    self._launch(key, informer)
                if self.options.gc_freeze:
                    tasks.create_task(self._freeze_after_sync(), name="cache gc freeze")
                await asyncio.get_running_loop().create_future()  # until cancelled
        finally:
            self._tasks = None
            self._running.clear()

    def _launch(self, key: _Key, informer: Informer) -> None:
        assert self._tasks is not None
        self._running[key] = self._tasks.create_task(informer.start(), name=f"informer {informer.name}")

    async def _freeze_after_sync(self) -> None:
        await self._created.wait()  # the informers known at start, or else the first ones asked for
        await self.wait_for_cache_sync()
        freeze_gc_once()

    @property
    def has_synced(self) -> bool:
        """Every informer created so far has synced."""
        return all(i.has_synced for i in self._informers.values())

    async def wait_for_cache_sync(self, timeout: float | None = None) -> None:
        """Wait until every informer created so far has synced; `TimeoutError` after `timeout`."""
        async with asyncio.timeout(timeout):
            for informer in list(self._informers.values()):
                await informer.wait_for_sync()

    # Health ----------------------------------------------------------------------------------

    def statistics(self) -> list[InformerStatistics]:
        return [i.statistics() for i in self._informers.values()]

    def readiness_problems(self, *, max_silence: float | None = None) -> list[str]:
        """Why the cache is not ready, or an empty list: informers not yet synced, and watches that
        have heard nothing (no event, no bookmark) for `max_silence` seconds, which only happens while
        reconnecting keeps failing (the watchdog reopens a silent watch much sooner). The default
        allows two watchdog periods plus the longest backoff."""
        reflector = self.options.reflector
        limit = (
            max_silence
            if max_silence is not None
            else 2 * reflector.inactivity_timeout + 2 * reflector.backoff_cap
        )
        problems: list[str] = []
        for stats in self.statistics():
            if not stats.synced:
                problems.append(f"informer {stats.name} has not synced")
            for r in stats.reflectors:
                if r.last_event_age is not None and r.last_event_age > limit:
                    problems.append(
                        f"watch {r.name} has been silent for {r.last_event_age:.0f}s"
                        + (f" (last error: {r.last_error})" if r.last_error else "")
                    )
        return problems


def _freeze_dict(obj: dict[str, Any]) -> dict[str, Any]:
    frozen: dict[str, Any] = freeze(obj)
    return frozen


def _canonical_labels(selector: str | None) -> str:
    return str(parse_selector(selector)) if selector else ""
