"""Sources produce events; each passes its own predicates and handler into the controller's queue.

- `Kind`: events of one kind from the shared informer cache (what `Builder.for_`, `owns` and
  `watches_kind` create);
- `Channel`: `GenericEvent`s another component puts on an `asyncio.Queue` in the same process.

A Source is anything with `async start(queue)`, running until cancelled, and `async wait_for_sync()`,
returning once the initial state has been delivered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Protocol

from olm_runtime import cache, workqueue
from olm_runtime.client.gvk import GroupVersionKind
from olm_runtime.controller.event import CreateEvent, DeleteEvent, Event, GenericEvent, UpdateEvent
from olm_runtime.controller.handler import Handler, enqueue_object
from olm_runtime.controller.predicate import Predicate
from olm_runtime.controller.reconcile import Request


class Source(Protocol):
    async def start(self, queue: workqueue.RateLimitingQueue[Request]) -> None: ...

    async def wait_for_sync(self) -> None: ...


def dispatch(
    event: Event,
    handler: Handler,
    predicates: Sequence[Predicate],
    queue: workqueue.RateLimitingQueue[Request],
) -> None:
    """Enqueue what `handler` makes of `event` if every predicate lets it through (in order)."""
    if all(predicate(event) for predicate in predicates):
        for request in handler(event):
            queue.add(request)


class Channel:
    """Events pushed by another component of the process (e.g. a catalog poller)."""

    def __init__(
        self,
        events: asyncio.Queue[GenericEvent],
        *,
        handler: Handler = enqueue_object,
        predicates: Sequence[Predicate] = (),
    ) -> None:
        self.events = events
        self.handler = handler
        self.predicates = tuple(predicates)

    async def start(self, queue: workqueue.RateLimitingQueue[Request]) -> None:
        while True:
            event = await self.events.get()
            dispatch(event, self.handler, self.predicates, queue)

    async def wait_for_sync(self) -> None:
        return None


class Kind:
    """Events of one kind from the shared informer cache.

    The informer is the cache's shared one for (kind, namespaces, label selector, metadata-only), so
    several controllers watching the same kind cost one watch. `None` options take the cache's
    configured values for the kind.
    """

    def __init__(
        self,
        informers: cache.Cache,
        gvk: GroupVersionKind,
        *,
        handler: Handler = enqueue_object,
        predicates: Sequence[Predicate] = (),
        namespaces: Iterable[str] | None = None,
        label_selector: str | None = None,
        metadata_only: bool = False,
    ) -> None:
        self.cache = informers
        self.gvk = gvk
        self.handler = handler
        self.predicates = tuple(predicates)
        self.namespaces = None if namespaces is None else tuple(namespaces)
        self.label_selector = label_selector
        self.metadata_only = metadata_only
        self._informer: cache.Informer | None = None
        self._registered = asyncio.Event()

    async def prepare(self) -> cache.Informer:
        """Create (or find) the shared informer now, so the cache starts it before this controller
        does: a standby replica then has it synced when it wins the election."""
        if self._informer is None:
            self._informer = await self.cache.get_informer(
                self.gvk,
                namespaces=self.namespaces,
                label_selector=self.label_selector,
                metadata_only=self.metadata_only,
            )
        return self._informer

    async def start(self, queue: workqueue.RateLimitingQueue[Request]) -> None:
        informer = await self.prepare()
        registration = informer.add_event_handler(_Dispatcher(self.handler, self.predicates, queue))
        self._registered.set()
        try:
            await asyncio.Event().wait()
        finally:
            informer.remove_event_handler(registration)

    async def wait_for_sync(self) -> None:
        await self._registered.wait()
        assert self._informer is not None
        await self._informer.wait_for_sync()


class _Dispatcher:
    """Adapts informer callbacks to events for one watch."""

    def __init__(
        self, handler: Handler, predicates: tuple[Predicate, ...], queue: workqueue.RateLimitingQueue[Request]
    ) -> None:
        self.handler = handler
        self.predicates = predicates
        self.queue = queue

    def on_add(self, obj: cache.Object, is_initial_list: bool) -> None:
        dispatch(CreateEvent(obj, is_initial_list), self.handler, self.predicates, self.queue)

    def on_update(self, old: cache.Object, new: cache.Object) -> None:
        dispatch(UpdateEvent(old, new), self.handler, self.predicates, self.queue)

    def on_delete(self, obj: cache.Object | cache.DeletedFinalStateUnknown) -> None:
        if isinstance(obj, cache.DeletedFinalStateUnknown):
            event = DeleteEvent(obj.obj, final_state_unknown=True)
        else:
            event = DeleteEvent(obj)
        dispatch(event, self.handler, self.predicates, self.queue)
