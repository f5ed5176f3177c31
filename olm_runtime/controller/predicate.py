"""Predicates decide, per watch, which events reach the handler.

A predicate is any `Callable[[Event], bool]`. The built-ins filter update events only (creates,
deletes and generic events pass) unless said otherwise, like controller-runtime's. Combine them with
`all_of`, `any_of` and `not_`; they are evaluated in the order given and short-circuit. There are
no global filters: a predicate applies only to the watch it is given to.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from olm_runtime.controller.event import CreateEvent, DeleteEvent, Event, GenericEvent, Object, UpdateEvent

Predicate = Callable[[Event], bool]


def _metadata(obj: Object) -> Mapping[str, Any]:
    metadata: Mapping[str, Any] = obj.get("metadata") or {}
    return metadata


def _on_update(changed: Callable[[Object, Object], bool]) -> Predicate:
    def predicate(event: Event) -> bool:
        return changed(event.old, event.new) if isinstance(event, UpdateEvent) else True

    return predicate


def _field_changed(field: str) -> Callable[[Object, Object], bool]:
    return lambda old, new: _metadata(old).get(field) != _metadata(new).get(field)


generation_changed: Predicate = _on_update(_field_changed("generation"))
"""Updates that changed `metadata.generation` (spec changes; status-only writes are dropped)."""

labels_changed: Predicate = _on_update(
    lambda old, new: (_metadata(old).get("labels") or {}) != (_metadata(new).get("labels") or {})
)
"""Updates that changed the labels."""

annotations_changed: Predicate = _on_update(
    lambda old, new: (_metadata(old).get("annotations") or {}) != (_metadata(new).get("annotations") or {})
)
"""Updates that changed the annotations."""

resource_version_changed: Predicate = _on_update(_field_changed("resourceVersion"))
"""Updates that are real writes (drops resync repeats of an unchanged object)."""


def matching(test: Callable[[Object], bool]) -> Predicate:
    """Events whose object passes `test`; an update passes when its old or new version does."""

    def predicate(event: Event) -> bool:
        if isinstance(event, UpdateEvent):
            return test(event.old) or test(event.new)
        return test(event.object)

    return predicate


def label_selector(selector: Mapping[str, str]) -> Predicate:
    """Events of objects whose labels include every `key: value` of `selector` (matchLabels)."""
    items = tuple(selector.items())
    return matching(lambda obj: all((_metadata(obj).get("labels") or {}).get(k) == v for k, v in items))


def for_event_types(
    *, create: bool = True, update: bool = True, delete: bool = True, generic: bool = True
) -> Predicate:
    """Only the listed kinds of events."""
    allowed = tuple(
        kind
        for kind, on in (
            (CreateEvent, create),
            (UpdateEvent, update),
            (DeleteEvent, delete),
            (GenericEvent, generic),
        )
        if on
    )
    return lambda event: isinstance(event, allowed)


def all_of(*predicates: Predicate) -> Predicate:
    return lambda event: all(p(event) for p in predicates)


def any_of(*predicates: Predicate) -> Predicate:
    return lambda event: any(p(event) for p in predicates)


def not_(predicate: Predicate) -> Predicate:
    return lambda event: not predicate(event)
