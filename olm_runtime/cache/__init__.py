"""Informers and the shared informer cache: local, indexed, eventually consistent copies of API objects.

The model (client-go's, with controller-runtime's shared cache on top):

- A `Reflector` lists a collection (a streaming list when the server supports it, paged otherwise),
  then watches it from the list's resourceVersion, and feeds what it learns to a sink. It survives
  everything but cancellation: 410 Gone relists, 429 waits, broken or silent connections reconnect
  (an inactivity watchdog closes a watch that has heard nothing, not even a bookmark, for 90 s),
  other errors back off (0.8 s to 30 s, jittered). Its health (watch age, time since the last event,
  relists, reconnects) is in `statistics()` and, through `CacheMetrics`, in `informer_*` metrics.
- An `Informer` runs one reflector per watched namespace into an indexed `Store` and calls its event
  handlers (`on_add`, `on_update`, `on_delete`) after each change.
- The `Cache` holds one informer per (kind, namespaces, label selector, field selector, metadata-only),
  created on first use and shared by every controller and reader in the process; `Cache.start()`
  runs them all until cancelled. `CacheReader` serves `get`/`list` from it.

What is promised:

- Eventual consistency: when the server stops changing, every informer converges to the server's
  state, including across API server restarts and expired resourceVersions.
- For each object, the cache and each handler see a subsequence of its states, in order. A state
  may be skipped (several updates during a disconnection arrive as one).
- Handlers run after the store and its indexes are updated, one call at a time, in order per object.
- A deletion missed while disconnected is delivered as `DeletedFinalStateUnknown` after the relist.
- `has_synced` becomes true only after every handler registered so far has seen the first full state.
- No watch stays silently dead: the watchdog reconnects it, and `Cache.readiness_problems()` and the
  statistics (`watch_age`, `last_event_age`) say when reconnecting keeps failing.

What is not promised:

- No ordering across objects, and no snapshot across objects (a relist is applied one object at a
  time, yielding to the event loop for big lists).
- Reads are not fresh: see `CacheReader` for staleness. Objects are keyed by namespace/name, not UID:
  a delete and re-create between two observations looks like an update.
- Cached objects are shared, not copied: they must not be mutated (`mutable_copy` makes a private
  copy; `CacheOptions.freeze_objects` turns accidental writes into `TypeError`).
- Handlers must be quick and must not block; they run inline on the event loop.
"""

from olm_runtime.cache._cache import Cache, NotCached, ResourceMapper, freeze_gc_once
from olm_runtime.cache._handlers import EventHandler, EventHandlerFuncs, HandlerRegistration
from olm_runtime.cache._informer import Informer, InformerStatistics, InformerStopped
from olm_runtime.cache._metrics import CacheMetrics
from olm_runtime.cache._objects import (
    DeletedFinalStateUnknown,
    Object,
    Transform,
    mutable_copy,
    object_key,
    strip_managed_fields,
)
from olm_runtime.cache._options import ALL_NAMESPACES, CacheOptions, KindOptions, no_transform
from olm_runtime.cache._reader import CacheReader
from olm_runtime.cache._reflector import (
    INITIAL_EVENTS_END,
    ListMode,
    Reflector,
    ReflectorOptions,
    ReflectorSink,
    ReflectorStatistics,
    StreamingListIncomplete,
    VeryShortWatch,
    WatchTransport,
)
from olm_runtime.cache._selector import (
    LabelSelector,
    Operator,
    Requirement,
    SelectorError,
    parse_selector,
    selector_from_dict,
)
from olm_runtime.cache._store import NAMESPACE_INDEX, IndexFunc, Store

__all__ = [
    "ALL_NAMESPACES",
    "INITIAL_EVENTS_END",
    "NAMESPACE_INDEX",
    "Cache",
    "CacheMetrics",
    "CacheOptions",
    "CacheReader",
    "DeletedFinalStateUnknown",
    "EventHandler",
    "EventHandlerFuncs",
    "HandlerRegistration",
    "IndexFunc",
    "Informer",
    "InformerStatistics",
    "InformerStopped",
    "KindOptions",
    "LabelSelector",
    "ListMode",
    "NotCached",
    "Object",
    "Operator",
    "Reflector",
    "ReflectorOptions",
    "ReflectorSink",
    "ReflectorStatistics",
    "Requirement",
    "ResourceMapper",
    "SelectorError",
    "Store",
    "StreamingListIncomplete",
    "Transform",
    "VeryShortWatch",
    "WatchTransport",
    "freeze_gc_once",
    "mutable_copy",
    "no_transform",
    "object_key",
    "parse_selector",
    "selector_from_dict",
    "strip_managed_fields",
]
