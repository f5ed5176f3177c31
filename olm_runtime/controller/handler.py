"""Handlers turn an event into the Requests to enqueue.

A handler is any `Callable[[Event], Iterable[Request]]`. The built-ins:

- `enqueue_object`: the object itself (what `Builder.for_` uses);
- `enqueue_owner(owner_kind, only_controller=True)`: the owner named in the object's
  ownerReferences (what `Builder.owns` uses);
- `enqueue_mapped(fn)`: whatever `fn(object)` returns, for relations that are not ownership.

For an update both the old and the new object are mapped, so a change of owner or of a mapped
relation reconciles both sides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from olm_runtime import ownerrefs
from olm_runtime.client.gvk import GroupVersionKind
from olm_runtime.controller.event import Event, Object, objects_of
from olm_runtime.controller.reconcile import Request

Handler = Callable[[Event], Iterable[Request]]


def request_for(obj: Object) -> Request:
    metadata: dict[str, Any] = obj.get("metadata") or {}
    return Request(name=metadata.get("name", ""), namespace=metadata.get("namespace") or "")


def enqueue_object(event: Event) -> Iterator[Request]:
    for obj in objects_of(event):
        yield request_for(obj)


def enqueue_owner(
    owner: GroupVersionKind, *, only_controller: bool = True, cluster_scoped: bool = False
) -> Handler:
    """Enqueue the owner of kind `owner` named in each object's ownerReferences.

    Owners share the object's namespace unless `cluster_scoped` (owner references cannot cross
    namespaces, so a namespaced owner is always in the object's own namespace).
    """

    def handler(event: Event) -> Iterator[Request]:
        for obj in objects_of(event):
            for ref in ownerrefs.owner_references(obj):
                if only_controller and not ref.get("controller"):
                    continue
                if ownerrefs.refers_to_kind(ref, owner):
                    namespace = "" if cluster_scoped else ((obj.get("metadata") or {}).get("namespace") or "")
                    yield Request(name=ref["name"], namespace=namespace)

    return handler


def enqueue_mapped(fn: Callable[[Object], Iterable[Request]]) -> Handler:
    def handler(event: Event) -> Iterator[Request]:
        for obj in objects_of(event):
            yield from fn(obj)

    return handler
