"""The front door: wire a reconciler to the kinds it cares about in one expression.

    controller = await (
        Builder(manager)
        .for_(kinds.DEPLOYMENT, predicates=[predicate.generation_changed])
        .owns(kinds.REPLICA_SET)
        .complete(reconciler)
    )

Each step is shorthand for a lower-level piece, so stepping down a level needs no source reading:

- `for_(kind)` = `watches_kind(kind, handler.enqueue_object)`: reconcile the object itself;
- `owns(kind)` = `watches_kind(kind, handler.enqueue_owner(<the for_ kind>))`: reconcile the
  controller-owner of each changed object;
- `watches_kind(kind, handler)` = `watches(source.Kind(manager.cache, kind, handler=handler))`;
- `complete(reconciler)` = `Controller(name=..., reconciler=..., sources=..., options=...)` then
  `manager.add(controller)`; it also creates the informers at once (`source.Kind.prepare`), so the
  manager's cache syncs them before the election and a standby takes over warm.

Predicates belong to the watch they are given to; there are no controller-wide filters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from olm_runtime import cache
from olm_runtime.client.client import Client
from olm_runtime.client.gvk import GroupVersionKind
from olm_runtime.controller import handler as handlers
from olm_runtime.controller._controller import Controller, Options
from olm_runtime.controller.predicate import Predicate
from olm_runtime.controller.reconcile import Reconciler
from olm_runtime.controller.source import Kind, Source


class Manager(Protocol):
    """What the builder needs of a manager (`olm_runtime.manager.Manager` provides it)."""

    @property
    def cache(self) -> cache.Cache: ...

    @property
    def client(self) -> Client: ...

    def add(self, runnable: Any) -> None: ...


class Builder:
    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._for: GroupVersionKind | None = None
        self._name: str | None = None
        self._options = Options()
        self._sources: list[Source] = []
        self._owned: list[tuple[GroupVersionKind, tuple[Predicate, ...], bool]] = []

    def named(self, name: str) -> Builder:
        """The controller's name in logs and metrics; default: the lower-cased `for_` kind."""
        self._name = name
        return self

    def with_options(self, options: Options) -> Builder:
        self._options = options
        return self

    def for_(
        self,
        kind: GroupVersionKind,
        *,
        predicates: Sequence[Predicate] = (),
        namespaces: Iterable[str] | None = None,
        label_selector: str | None = None,
    ) -> Builder:
        """Reconcile objects of `kind` (at most one `for_` per controller)."""
        if self._for is not None:
            raise ValueError("for_ may be called only once; use watches_kind for more kinds")
        self._for = kind
        self._sources.append(
            Kind(
                self._manager.cache,
                self._for,
                handler=handlers.enqueue_object,
                predicates=predicates,
                namespaces=namespaces,
                label_selector=label_selector,
            )
        )
        return self

    def owns(
        self, kind: GroupVersionKind, *, predicates: Sequence[Predicate] = (), only_controller: bool = True
    ) -> Builder:
        """Reconcile the `for_` object that owns (as controller, unless `only_controller=False`) a
        changed object of `kind`."""
        self._owned.append((kind, tuple(predicates), only_controller))
        return self

    def watches_kind(
        self,
        kind: GroupVersionKind,
        handler: handlers.Handler,
        *,
        predicates: Sequence[Predicate] = (),
        namespaces: Iterable[str] | None = None,
        label_selector: str | None = None,
        metadata_only: bool = False,
    ) -> Builder:
        """Map changes of `kind` to requests with `handler` (e.g. `handler.enqueue_mapped(fn)`)."""
        return self.watches(
            Kind(
                self._manager.cache,
                kind,
                handler=handler,
                predicates=predicates,
                namespaces=namespaces,
                label_selector=label_selector,
                metadata_only=metadata_only,
            )
        )

    def watches(self, source: Source) -> Builder:
        """Any source, e.g. `source.Channel(queue)` fed by another component of the process."""
        self._sources.append(source)
        return self

    async def complete(self, reconciler: Reconciler) -> Controller:
        """Build the controller and add it to the manager (which starts it)."""
        if self._for is None and self._owned:
            raise ValueError("owns needs for_: ownership is resolved to the for_ kind")
        if self._for is None and not self._sources:
            raise ValueError("the controller watches nothing: call for_ or watches")
        if self._for is not None and self._owned:
            owner = await self._manager.client.resource_for(self._for)
            for kind, predicates, only_controller in self._owned:
                owner_handler = handlers.enqueue_owner(
                    self._for, only_controller=only_controller, cluster_scoped=not owner.namespaced
                )
                self.watches_kind(kind, owner_handler, predicates=predicates)
        name = self._name or (self._for.kind.lower() if self._for else None)
        if name is None:
            raise ValueError("a controller without for_ needs a name: call named()")
        for source in self._sources:
            if isinstance(source, Kind):
                await source.prepare()  # warm standby: the cache runs it before the election
        controller = Controller(
            name=name,
            reconciler=reconciler,
            sources=self._sources,
            options=self._options,
            kind=self._for.kind if self._for else None,
        )
        self._manager.add(controller)
        return controller
