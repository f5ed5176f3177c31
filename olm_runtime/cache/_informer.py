"""An informer: reflectors feeding one indexed store, and handlers told about every change.

One reflector runs per watched namespace (or one for all namespaces, or for a cluster-scoped
kind); each replaces only its own namespace's share of the store after a relist, so objects that
vanished while a watch was down are deleted and announced with `DeletedFinalStateUnknown`.
"""

from __future__ import annotations

import asyncio
import builtins
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from olm_runtime.cache._handlers import EventHandler, HandlerRegistration
from olm_runtime.cache._objects import DeletedFinalStateUnknown, Object, Transform, key_of, object_key
from olm_runtime.cache._reflector import (
    Reflector,
    ReflectorOptions,
    ReflectorStatistics,
    WatchTransport,
    describe,
)
from olm_runtime.cache._selector import LabelSelector
from olm_runtime.cache._store import NAMESPACE_INDEX, IndexFunc, Store
from olm_runtime.client.gvk import ResourceInfo
from olm_runtime.clock import REAL, Clock

__all__ = ["Informer", "InformerStatistics", "InformerStopped"]

_log = structlog.get_logger("olm_runtime.cache")
_YIELD_EVERY = 0.01
_MIN_RESYNC = 1.0


class InformerStopped(RuntimeError):
    """The informer stopped (was cancelled) before it synced."""


@dataclass(frozen=True, kw_only=True)
class InformerStatistics:
    name: str
    synced: bool
    objects: int
    handlers: int
    handler_errors: int
    """Exceptions raised by event handlers (each logged)."""
    reflectors: tuple[ReflectorStatistics, ...]


def _rv(obj: Object) -> Any:
    return obj["metadata"].get("resourceVersion")


class _Scope:
    """The sink one reflector writes to: the informer, limited to one namespace (or everything)."""

    __slots__ = ("_informer", "_scope")

    def __init__(self, informer: Informer, scope: str | None) -> None:
        self._informer, self._scope = informer, scope

    async def replace(self, objects: list[dict[str, Any]], resource_version: str) -> None:
        await self._informer._replace(self._scope, objects)

    def added(self, obj: dict[str, Any]) -> None:
        self._informer._upserted(obj)

    def modified(self, obj: dict[str, Any]) -> None:
        self._informer._upserted(obj)

    def deleted(self, obj: dict[str, Any]) -> None:
        self._informer._deleted(obj)


class Informer:
    """Keeps a store of one kind in step with the API server and notifies event handlers.

    `start()` runs it until cancelled. Reads (`get`, `list`, `by_index`) never touch the network:
    they are as fresh as the last event received. Usually obtained from `Cache.get_informer`, which
    shares one informer between every user in the process.

    `compact=True` keeps the store's objects as JSON bytes (`Store`): reads and each update's old
    object are parsed copies, so reads cost a parse and may be changed freely.
    """

    # A controller watching as thousands of identities holds thousands of informers.
    __slots__ = (
        "_clock",
        "_default_resync",
        "_handler_errors",
        "_handlers",
        "_reflectors",
        "_resync_changed",
        "_resyncing",
        "_scopes",
        "_started",
        "_stopped",
        "_store",
        "_synced_scopes",
        "_tasks",
        "_waiters",
        "metadata_only",
        "name",
        "resource",
    )

    def __init__(
        self,
        transport: WatchTransport,
        resource: ResourceInfo,
        *,
        namespaces: Sequence[str] | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        transform: Transform | None = None,
        indexers: Mapping[str, IndexFunc] | None = None,
        resync_period: float | None = None,
        reflector_options: ReflectorOptions | None = None,
        compact: bool = False,
        clock: Clock = REAL,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.resource = resource
        self.metadata_only = metadata_only
        self._clock = clock
        self._store = Store(indexers, compact=compact)
        self._handlers: tuple[HandlerRegistration, ...] = ()
        self._handler_errors = 0
        self._default_resync = _check_resync(resync_period)
        scopes: list[str | None] = [None]
        if resource.namespaced and namespaces:
            scopes = [*sorted(set(namespaces))]
        self._scopes = tuple(scopes)
        self._synced_scopes: set[str | None] = set()
        self._reflectors = tuple(
            Reflector(
                transport,
                resource,
                _Scope(self, scope),
                namespace=scope,
                label_selector=label_selector,
                field_selector=field_selector,
                metadata_only=metadata_only,
                transform=transform,
                options=reflector_options,
                clock=clock,
                rand=rand,
            )
            for scope in scopes
        )
        self.name = describe(resource, scopes, label_selector, field_selector, metadata_only)
        self._started = False
        self._stopped = False
        self._waiters: list[asyncio.Future[None]] = []
        # The resync loop runs only once a handler asks for resyncs: most informers never do, and a
        # process may hold thousands of them.
        self._resync_changed: asyncio.Event | None = None
        self._resyncing = False
        self._tasks: asyncio.TaskGroup | None = None

    @property
    def _log(self) -> Any:
        # Bound when something is logged, not kept: a bound logger costs each of thousands of
        # informers over a kilobyte, and an informer logs a few lines in its lifetime.
        return _log.bind(informer=self.name)

    # Lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Run the reflectors (and resyncs) until cancelled. An informer starts only once."""
        if self._started:
            raise RuntimeError(f"informer {self.name} was already started")
        self._started = True
        try:
            async with asyncio.TaskGroup() as tasks:
                self._tasks = tasks
                first, *others = self._reflectors
                for reflector in others:
                    tasks.create_task(reflector.run(), name=f"reflector {reflector.name}")
                self._start_resyncs()
                # The first (usually the only) reflector runs in this task rather than a task of its
                # own: one Task less (about a kilobyte with its name) for each of thousands of
                # informers. Its failure ends the group as a task's would.
                await first.run()
        finally:
            self._tasks = None
            self._stopped = True
            self._wake_waiters()

    def _start_resyncs(self) -> None:
        """Start the resync loop if a handler wants resyncs and the informer runs."""
        if self._resync_changed is not None and self._tasks is not None and not self._resyncing:
            self._resyncing = True
            self._tasks.create_task(self._resync_loop(), name=f"resync {self.name}")

    @property
    def has_synced(self) -> bool:
        """Every reflector has delivered its first full state (and handlers have seen it)."""
        return len(self._synced_scopes) == len(self._scopes)

    async def wait_for_sync(self, timeout: float | None = None) -> None:
        """Return once synced; raise `TimeoutError` after `timeout` seconds, or `InformerStopped` if
        the informer stops first."""
        if self.has_synced:
            return
        if self._stopped:
            raise InformerStopped(f"informer {self.name} stopped before it synced")
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(timeout):
                await waiter
        finally:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
        if not self.has_synced:
            raise InformerStopped(f"informer {self.name} stopped before it synced")

    def _wake_waiters(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # Reads -----------------------------------------------------------------------------------

    @property
    def store(self) -> Store:
        """The store itself, for reads and `add_indexers`; never write to it."""
        return self._store

    def __len__(self) -> int:
        return len(self._store)

    def get(self, name: str, namespace: str | None = None) -> Object | None:
        """The cached object, or `None`; the result is shared: do not mutate it."""
        return self._store.get(key_of(name, namespace))

    def stored(self, name: str, namespace: str | None = None) -> Object | bytes | None:
        """`Store.stored`: the object as held, JSON bytes in a compact informer."""
        return self._store.stored(key_of(name, namespace))

    def list(
        self, namespace: str | None = None, label_selector: LabelSelector | None = None
    ) -> builtins.list[Object]:
        """Cached objects, optionally of one namespace and matching a selector."""
        items = self._store.list() if namespace is None else self._store.by_index(NAMESPACE_INDEX, namespace)
        if label_selector is not None and not label_selector.empty:
            items = [o for o in items if label_selector.matches_object(o)]
        return items

    def by_index(self, index: str, value: str) -> builtins.list[Object]:
        return self._store.by_index(index, value)

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions (also after start: existing objects are indexed at once)."""
        self._store.add_indexers(indexers)

    def statistics(self) -> InformerStatistics:
        return InformerStatistics(
            name=self.name,
            synced=self.has_synced,
            objects=len(self._store),
            handlers=len(self._handlers),
            handler_errors=self._handler_errors,
            reflectors=tuple(r.statistics() for r in self._reflectors),
        )

    # Handlers --------------------------------------------------------------------------------

    def add_event_handler(
        self, handler: EventHandler, *, resync_period: float | None = None
    ) -> HandlerRegistration:
        """Register a handler. If objects are cached already, it first gets an `on_add(obj, True)`
        for each of them, before this call returns. `resync_period` (default: the informer's)
        redelivers every cached object as `on_update(obj, obj)` that often (at least 1 s)."""
        period = _check_resync(resync_period) or self._default_resync
        next_resync = None if period is None else self._clock.now() + period
        registration = HandlerRegistration(handler, period, next_resync)
        for obj in self._store.list():
            self._call(handler.on_add, obj, True)
        if self.has_synced:
            registration._mark_synced()
        self._handlers = (*self._handlers, registration)
        if period is not None:
            if self._resync_changed is None:
                self._resync_changed = asyncio.Event()
            self._resync_changed.set()
            self._start_resyncs()
        return registration

    def remove_event_handler(self, registration: HandlerRegistration) -> None:
        registration.removed = True
        self._handlers = tuple(r for r in self._handlers if r is not registration)

    def _call(self, method: Callable[..., None], *args: Any) -> None:
        try:
            method(*args)
        except Exception:  # one bad handler must not stop the others or the watch
            self._handler_errors += 1
            self._log.exception("event handler failed", handler=getattr(method, "__qualname__", repr(method)))

    def _notify_add(self, obj: Object, initial: bool) -> None:
        for registration in self._handlers:
            self._call(registration.handler.on_add, obj, initial)

    def _notify_update(self, old: Object, new: Object) -> None:
        for registration in self._handlers:
            self._call(registration.handler.on_update, old, new)

    def _notify_delete(self, obj: Object | DeletedFinalStateUnknown) -> None:
        for registration in self._handlers:
            self._call(registration.handler.on_delete, obj)

    # What reflectors deliver -----------------------------------------------------------------

    def _store_object(self, obj: Object) -> tuple[bool, Object | None]:
        try:
            return True, self._store.upsert(obj)
        except Exception:  # a failing index function: report, keep the old state
            self._log.exception("indexing failed; object not stored", key=object_key(obj))
            return False, None

    def _upserted(self, obj: Object) -> None:
        stored, old = self._store_object(obj)
        if not stored:
            return
        if old is None:
            self._notify_add(obj, False)
        else:
            self._notify_update(old, obj)

    def _deleted(self, obj: Object) -> None:
        self._store.delete(object_key(obj))
        self._notify_delete(obj)

    async def _replace(self, scope: str | None, objects: builtins.list[dict[str, Any]]) -> None:
        initial = scope not in self._synced_scopes
        seen: set[str] = set()
        last_yield = time.perf_counter()
        for obj in objects:
            seen.add(object_key(obj))
            stored, old = self._store_object(obj)
            if stored:
                if old is None:
                    self._notify_add(obj, initial)
                elif _rv(old) != _rv(obj):
                    self._notify_update(old, obj)
            if time.perf_counter() - last_yield > _YIELD_EVERY:
                await asyncio.sleep(0)
                last_yield = time.perf_counter()
        existing = self._store.keys() if scope is None else self._store.index_keys(NAMESPACE_INDEX, scope)
        for key in existing:
            if key not in seen:
                old = self._store.delete(key)
                if old is not None:
                    self._notify_delete(DeletedFinalStateUnknown(key, old))
        if initial:
            self._synced_scopes.add(scope)
            if self.has_synced:
                for registration in self._handlers:
                    registration._mark_synced()
                self._log.debug("synced", objects=len(self._store))
                self._wake_waiters()

    # Resync ----------------------------------------------------------------------------------

    async def _resync_loop(self) -> None:
        changed = self._resync_changed
        assert changed is not None  # created before the loop starts
        while True:
            due = [r.next_resync for r in self._handlers if r.next_resync is not None]
            changed.clear()
            if not due:
                await changed.wait()
                continue
            delay = min(due) - self._clock.now()
            if delay > 0:
                sleeper = asyncio.ensure_future(self._clock.sleep_until(min(due)))
                woken = asyncio.ensure_future(changed.wait())
                try:
                    await asyncio.wait((sleeper, woken), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    sleeper.cancel()
                    woken.cancel()
                    await asyncio.gather(sleeper, woken, return_exceptions=True)
                continue
            await self._resync_due()

    async def _resync_due(self) -> None:
        now = self._clock.now()
        due = [r for r in self._handlers if r.next_resync is not None and r.next_resync <= now]
        if not self.has_synced:
            for registration in due:
                registration.next_resync = now + (registration.resync_period or 0)
            return
        last_yield = time.perf_counter()
        for obj in self._store.list():
            for registration in due:
                if not registration.removed:
                    self._call(registration.handler.on_update, obj, obj)
            if time.perf_counter() - last_yield > _YIELD_EVERY:
                await asyncio.sleep(0)
                last_yield = time.perf_counter()
        for registration in due:
            registration.next_resync = self._clock.now() + (registration.resync_period or 0)


def _check_resync(period: float | None) -> float | None:
    if period is None or period <= 0:
        return None
    return max(period, _MIN_RESYNC)
