"""The events a Source delivers: what happened to an object, as the informer saw it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Object = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CreateEvent:
    object: Object
    is_initial_list: bool = False
    """True for objects delivered by the informer's initial list (or relist), not by a watch."""


@dataclass(frozen=True, slots=True)
class UpdateEvent:
    old: Object
    new: Object


@dataclass(frozen=True, slots=True)
class DeleteEvent:
    object: Object
    final_state_unknown: bool = False
    """True when the delete was missed and `object` is the last state the cache held."""


@dataclass(frozen=True, slots=True)
class GenericEvent:
    """An event from outside the API server (an in-process channel, a timer)."""

    object: Object


Event = CreateEvent | UpdateEvent | DeleteEvent | GenericEvent


def objects_of(event: Event) -> tuple[Object, ...]:
    """The object(s) an event concerns (both versions for an update)."""
    if isinstance(event, UpdateEvent):
        return (event.old, event.new)
    return (event.object,)
