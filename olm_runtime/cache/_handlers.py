"""Event handlers: what an informer calls after it has updated its store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from olm_runtime.cache._objects import DeletedFinalStateUnknown, Object

__all__ = ["EventHandler", "EventHandlerFuncs", "HandlerRegistration"]


class EventHandler(Protocol):
    """Receives an informer's notifications, in order for each object, after the store changed.

    Calls happen on the event loop, one at a time, inline with the watch: a handler must return
    quickly (typically it adds a key to a workqueue) and must not block. Exceptions are logged and
    counted, never propagated. Objects are the cached ones: do not mutate them.
    """

    def on_add(self, obj: Object, is_initial_list: bool) -> None:
        """An object appeared. `is_initial_list` is true for the informer's first list (and for the
        existing objects replayed to a handler registered later)."""
        ...

    def on_update(self, old: Object, new: Object) -> None:
        """An object changed (or, on a resync, is redelivered: then `old is new`)."""
        ...

    def on_delete(self, obj: Object | DeletedFinalStateUnknown) -> None:
        """An object was deleted. A `DeletedFinalStateUnknown` means the deletion was only noticed
        by a relist after the watch had been down; its `obj` is the last cached state."""
        ...


class EventHandlerFuncs:
    """An `EventHandler` made of plain functions; the ones left out ignore their events."""

    __slots__ = ("_add", "_delete", "_update")

    def __init__(
        self,
        *,
        on_add: Callable[[Object, bool], None] | None = None,
        on_update: Callable[[Object, Object], None] | None = None,
        on_delete: Callable[[Object | DeletedFinalStateUnknown], None] | None = None,
    ) -> None:
        self._add, self._update, self._delete = on_add, on_update, on_delete

    def on_add(self, obj: Object, is_initial_list: bool) -> None:
        if self._add is not None:
            self._add(obj, is_initial_list)

    def on_update(self, old: Object, new: Object) -> None:
        if self._update is not None:
            self._update(old, new)

    def on_delete(self, obj: Object | DeletedFinalStateUnknown) -> None:
        if self._delete is not None:
            self._delete(obj)


class HandlerRegistration:
    """Returned by `Informer.add_event_handler`; pass it to `remove_event_handler`."""

    def __init__(self, handler: EventHandler, resync_period: float | None, next_resync: float | None) -> None:
        self.handler = handler
        self.resync_period = resync_period
        """Seconds between redeliveries of every cached object as `on_update(obj, obj)`, or `None`."""
        self.next_resync = next_resync
        self._synced = False
        self.removed = False

    @property
    def has_synced(self) -> bool:
        """The handler has been told about every object of the informer's first full state."""
        return self._synced

    def _mark_synced(self) -> None:
        self._synced = True
