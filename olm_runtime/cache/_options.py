"""What a `Cache` watches and how: cache-wide defaults and per-kind overrides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from olm_runtime.cache._objects import Transform, strip_managed_fields
from olm_runtime.cache._reflector import ReflectorOptions
from olm_runtime.client.gvk import GroupVersionKind

__all__ = ["ALL_NAMESPACES", "CacheOptions", "KindOptions", "no_transform"]

ALL_NAMESPACES: tuple[str, ...] = ()
"""The `namespaces` value that watches every namespace (one watch, not one per namespace)."""


def no_transform(obj: dict[str, object]) -> dict[str, object]:
    """A transform that keeps objects as the server sent them (managedFields included)."""
    return obj


@dataclass(frozen=True, kw_only=True)
class KindOptions:
    """Overrides for one kind in `CacheOptions.by_kind`; each field left `None` takes the cache's."""

    namespaces: tuple[str, ...] | None = None
    """Namespaces to watch for this kind; `ALL_NAMESPACES` (empty) for all of them."""
    label_selector: str | None = None
    """Server-side label selector; `""` for none even if the cache has a default."""
    field_selector: str | None = None
    """Server-side field selector (e.g. `metadata.name=x`); `""` for none."""
    transform: Transform | None = None
    """Applied to each object before it is stored; `no_transform` keeps everything."""
    resync_period: float | None = None
    """Seconds between redeliveries of every object to handlers; `0` for none."""
    compact: bool | None = None
    """Keep this kind's objects as JSON and parse a copy on every read (`CacheOptions.compact`)."""


@dataclass(frozen=True, kw_only=True)
class CacheOptions:
    """How a `Cache` builds its informers."""

    namespaces: tuple[str, ...] = ALL_NAMESPACES
    """Namespaces to watch (namespaced kinds only); one watch per namespace when restricted. Reads
    of other namespaces raise `NotCached`."""
    label_selector: str = ""
    """Server-side label selector for every kind: objects that do not match are never cached."""
    field_selector: str = ""
    """Server-side field selector for every kind."""
    transform: Transform = strip_managed_fields
    """Applied to every object before it is stored: by default drops `metadata.managedFields`.
    Use it to slim objects further (drop `status`, large annotations) for kinds read only in part."""
    by_kind: Mapping[GroupVersionKind, KindOptions] = field(default_factory=dict)
    """Per-kind overrides of the above (operator-controller watches Secrets in one namespace only)."""
    resync_period: float | None = None
    """Seconds between redeliveries of every cached object to every handler as an update (no API
    call). Off by default: a controller that needs to come back should return `requeue_after`."""
    reflector: ReflectorOptions = field(default_factory=ReflectorOptions)
    """Listing and watching: streaming or paged lists, timeouts, watchdog, backoff."""
    compact: bool = False
    """Keep every cached object as its JSON bytes, about a sixth of the parsed dicts, and parse a
    new copy on every read, which the reader may then change. Worth it where objects are many and
    each is read now and then (a reconcile reads one or two), not where handlers or reconciles
    list thousands of them at a time. Compact objects are never frozen: each read is a copy."""
    freeze_objects: bool = False
    """Make cached objects deeply read-only at run time (writes raise `TypeError`). Costs about as
    much CPU as parsing each object once more; meant for tests and development, where it catches
    code that mutates shared objects. Without it the read-only contract is enforced only by typing."""
    gc_freeze: bool = True
    """After the first full sync of the informers known at start, move everything alive into the
    garbage collector's permanent generation (`gc.freeze()`, once per process) so full collections
    stop rescanning the cache."""
    sync_timeout: float = 120.0
    """How long a `CacheReader` read waits for a lazily started informer to sync before raising
    `TimeoutError`."""
