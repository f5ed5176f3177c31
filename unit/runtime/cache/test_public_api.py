"""The cache's public surface is pinned: changing it must be a decision, not an accident."""

from __future__ import annotations

import types

from olm_runtime import cache


def test_cache_exports_exactly_these_names() -> None:
    assert sorted(cache.__all__) == [
        "ALL_NAMESPACES",
        "Cache",
        "CacheMetrics",
        "CacheOptions",
        "CacheReader",
        "DeletedFinalStateUnknown",
        "EventHandler",
        "EventHandlerFuncs",
        "HandlerRegistration",
        "INITIAL_EVENTS_END",
        "IndexFunc",
        "Informer",
        "InformerStatistics",
        "InformerStopped",
        "KindOptions",
        "LabelSelector",
        "ListMode",
        "NAMESPACE_INDEX",
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
    for name in cache.__all__:
        assert getattr(cache, name) is not None


def test_reader_and_informer_methods_are_pinned() -> None:
    def methods(cls: type) -> set[str]:
        # Slots are attributes, not methods.
        return {
            name
            for name in dir(cls)
            if not name.startswith("_") and not isinstance(getattr(cls, name), types.MemberDescriptorType)
        }

    assert methods(cache.CacheReader) == {"get", "list"}
    assert methods(cache.Cache) == {
        "get_informer",
        "has_synced",
        "informers",
        "kind_options",
        "readiness_problems",
        "remove_informer",
        "start",
        "statistics",
        "wait_for_cache_sync",
    }
    assert methods(cache.Informer) == {
        "add_event_handler",
        "add_indexers",
        "by_index",
        "get",
        "has_synced",
        "list",
        "remove_event_handler",
        "start",
        "statistics",
        "store",
        "stored",
        "wait_for_sync",
    }
