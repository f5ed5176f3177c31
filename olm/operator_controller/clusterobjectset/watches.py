"""Drift detection: informers on the kinds revisions manage, mapped back to the owning revision.

One informer per kind in use, created on the first reconcile that needs it through the shared
cache, watching all namespaces but only objects labelled with a revision name. Every add, change
or deletion enqueues the revision that controls the object, which then restores it. The informers
double as the first place the rollout looks for an object's current state.

An informer is stopped again (`prune`) once it holds nothing: no object of its kind carries a
revision label any more, so no revision manages that kind. A later rollout of the kind starts a
new one on demand, before it applies anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import cache, ownerrefs
from olm_runtime.client import GroupVersionKind
from olm_runtime.controller import Request, event

__all__ = ["DriftWatches", "WatchUnavailable", "owning_revisions"]

SELECTOR = names.REVISION_NAME_LABEL
"""Managed objects (and the Secrets of a revision) carry this label; only they are watched."""


def owning_revisions(obj: Mapping[str, Any]) -> Iterator[Request]:
    """The revision controlling `obj` (by controller reference), else the one its label names."""
    controller = ownerrefs.controller_of(obj)
    if controller is not None and ownerrefs.refers_to_kind(controller, CLUSTER_OBJECT_SET):
        yield Request(name=str(controller.get("name")))
        return
    label = ((obj.get("metadata") or {}).get("labels") or {}).get(names.REVISION_NAME_LABEL)
    if label:
        yield Request(name=label)


class WatchUnavailable(Exception):
    """The informer of a kind did not sync in time (forbidden, or the API server is failing)."""


class DriftWatches:
    """Starts informers per kind on demand and feeds their events to `events` (a `Channel`)."""

    def __init__(
        self, informers: cache.Cache, events: asyncio.Queue[event.GenericEvent], *, sync_timeout: float = 30.0
    ) -> None:
        self._cache = informers
        self._sync_timeout = sync_timeout
        self._events = events
        self._informers: dict[GroupVersionKind, cache.Informer] = {}
        self._lock = asyncio.Lock()

    def _notify(self, obj: Any) -> None:
        if isinstance(obj, cache.DeletedFinalStateUnknown):
            obj = obj.obj
        self._events.put_nowait(event.GenericEvent(obj))

    async def informer(self, gvk: GroupVersionKind) -> cache.Informer:
        """The synced informer of `gvk` (created and registered on first use); raises
        `NoKindMatch` when the kind is not served."""
        informer = self._informers.get(gvk)
        if informer is None:
            async with self._lock:
                informer = self._informers.get(gvk)
                if informer is None:
                    informer = await self._cache.get_informer(gvk, namespaces=(), label_selector=SELECTOR)
                    informer.add_event_handler(
                        cache.EventHandlerFuncs(
                            on_add=lambda obj, _initial: self._notify(obj),
                            on_update=lambda _old, new: self._notify(new),
                            on_delete=self._notify,
                        )
                    )
                    self._informers[gvk] = informer
        try:
            await asyncio.wait_for(informer.wait_for_sync(), timeout=self._sync_timeout)
        except TimeoutError:
            errors = [r.last_error for r in informer.statistics().reflectors if r.last_error]
            detail = f": {errors[0]}" if errors else ""
            # Without this deadline a reconcile (and with it a graceful shutdown) would wait forever
            # on a kind the controller may not list, e.g. when its RBAC lacks the kind.
            raise WatchUnavailable(
                f"cannot watch {gvk.kind}.{gvk.group or 'core'}: "
                f"not synced after {self._sync_timeout:.0f}s{detail}"
            ) from None
        return informer

    def kinds(self) -> list[GroupVersionKind]:
        return list(self._informers)

    async def prune(self) -> list[GroupVersionKind]:
        """Stop the informers of kinds no revision manages any more (empty, synced stores)."""
        async with self._lock:
            idle = [gvk for gvk, inf in self._informers.items() if inf.has_synced and len(inf) == 0]
            for gvk in idle:
                self._cache.remove_informer(self._informers.pop(gvk))
        return idle
