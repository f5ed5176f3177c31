"""The shared cache: one informer per watch, per-kind defaults, lazy start, cache-backed reads."""

from __future__ import annotations

import gc
import re
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from olm_runtime import cache
from olm_runtime.cache import _cache
from olm_runtime.client import errors
from olm_runtime.client.gvk import GroupVersionKind, ResourceInfo
from olm_runtime.clock import FakeClock
from unit.runtime.cache.fakes import (
    CONFIGMAPS,
    NAMESPACES,
    START,
    FakeTransport,
    Watch,
    cm,
    event,
    page,
    run_until,
    running,
)

CONFIGMAP = CONFIGMAPS.gvk
NAMESPACE = NAMESPACES.gvk


class Mapper:
    async def resource_for(self, gvk: GroupVersionKind) -> ResourceInfo:
        return {CONFIGMAP: CONFIGMAPS, NAMESPACE: NAMESPACES}[gvk]


def make(transport: FakeTransport, **options: Any) -> tuple[cache.Cache, FakeClock]:
    clock = FakeClock(start=START)
    options.setdefault("gc_freeze", False)  # never freeze the test process's collector
    options.setdefault("reflector", cache.ReflectorOptions(list_mode=cache.ListMode.PAGED))
    return cache.Cache(transport, Mapper(), cache.CacheOptions(**options), clock=clock), clock


async def test_equivalent_watches_share_one_informer_and_different_ones_do_not() -> None:
    shared, _ = make(FakeTransport())
    a = await shared.get_informer(CONFIGMAP, label_selector="b=2,a=1")
    b = await shared.get_informer(CONFIGMAP, label_selector="a=1, b=2")
    assert a is b
    assert await shared.get_informer(CONFIGMAP) is not a
    assert await shared.get_informer(CONFIGMAP, metadata_only=True) is not await shared.get_informer(
        CONFIGMAP
    )
    assert await shared.get_informer(CONFIGMAP, namespaces=["x"]) is not await shared.get_informer(CONFIGMAP)
    assert len(shared.informers()) == 4


async def test_per_kind_options_override_the_cache_defaults() -> None:
    options = {
        "namespaces": ("team-a",),
        "label_selector": "managed=true",
        "by_kind": {NAMESPACE: cache.KindOptions(label_selector="")},
    }
    shared, _ = make(FakeTransport(), **options)
    assert shared.kind_options(CONFIGMAP).namespaces == ("team-a",)
    assert shared.kind_options(CONFIGMAP).label_selector == "managed=true"
    assert shared.kind_options(NAMESPACE).label_selector == ""
    assert shared.kind_options(CONFIGMAP).transform is cache.strip_managed_fields


async def test_informers_start_with_the_cache_and_later_ones_at_once() -> None:
    transport = FakeTransport()
    transport.lists.extend([page([cm("a", 1, "team-a")], 10), page([], 5)])
    shared, clock = make(transport, namespaces=("team-a",), label_selector="managed=true")
    before = await shared.get_informer(CONFIGMAP)
    async with running(shared.start):
        await run_until(clock, lambda: before.has_synced)
        after = await shared.get_informer(NAMESPACE)
        await run_until(clock, lambda: after.has_synced)
        await shared.wait_for_cache_sync(timeout=1)
    configmaps, namespaces = transport.list_calls
    assert configmaps.path == "/api/v1/namespaces/team-a/configmaps"
    assert configmaps.params["labelSelector"] == "managed=true"
    assert namespaces.path == "/api/v1/namespaces"  # cluster-scoped: the namespaces do not apply


async def test_a_removed_informer_stops_and_a_new_one_replaces_it_on_demand() -> None:
    transport = FakeTransport()
    transport.lists.extend([page([cm("a", 1, "team-a")], 10), page([cm("a", 1, "team-a")], 12)])
    shared, clock = make(transport, namespaces=("team-a",))
    first = await shared.get_informer(CONFIGMAP)
    async with running(shared.start):
        await run_until(clock, lambda: first.has_synced)
        assert shared.remove_informer(first)
        assert not shared.remove_informer(first)
        assert first not in shared.informers()
        second = await shared.get_informer(CONFIGMAP)
        assert second is not first
        await run_until(clock, lambda: second.has_synced)
    assert len(transport.list_calls) == 2  # the replacement listed afresh


async def test_the_reader_starts_an_informer_on_first_read_and_answers_from_it() -> None:
    transport = FakeTransport()
    transport.lists.append(
        page(
            [
                cm("a", 1, "x", {"app": "web"}),
                cm("b", 2, "x", {"app": "db"}),
                cm("c", 3, "y", {"app": "web"}),
            ],
            10,
        )
    )
    transport.watches.append(Watch(end="live"))
    shared, _ = make(transport)
    reader = cache.CacheReader(shared)
    async with running(shared.start):
        got = await reader.get(CONFIGMAP, "a", namespace="x")
        assert got["metadata"]["name"] == "a"
        assert "managedFields" not in got["metadata"]
        assert got is await reader.get(CONFIGMAP, "a", namespace="x")  # shared, not copied
        with pytest.raises(errors.NotFound, match='configmaps "x/nope" not found in the cache'):
            await reader.get(CONFIGMAP, "nope", namespace="x")
        names = [o["metadata"]["name"] for o in await reader.list(CONFIGMAP, label_selector="app=web")]
        assert sorted(names) == ["a", "c"]
        in_x = await reader.list(CONFIGMAP, namespace="x")
        assert sorted(o["metadata"]["name"] for o in in_x) == ["a", "b"]
        informer = await shared.get_informer(CONFIGMAP)
        informer.add_indexers({"by-app": lambda o: [o["metadata"]["labels"]["app"]]})
        by_app = await reader.list(CONFIGMAP, namespace="y", index=("by-app", "web"))
        assert [o["metadata"]["name"] for o in by_app] == ["c"]
        with pytest.raises(ValueError, match="needs a namespace"):
            await reader.get(CONFIGMAP, "a")
    assert len(transport.list_calls) == 1


async def test_reading_a_namespace_the_cache_does_not_watch_is_an_error_not_an_empty_answer() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    shared, _ = make(transport, namespaces=("team-a",))
    reader = cache.CacheReader(shared)
    async with running(shared.start):
        with pytest.raises(cache.NotCached, match="does not watch namespace 'team-b'"):
            await reader.list(CONFIGMAP, namespace="team-b")


async def test_a_read_that_cannot_sync_in_time_raises_timeout() -> None:
    shared, _ = make(FakeTransport(), sync_timeout=0.01)  # the list never answers
    async with running(shared.start):
        with pytest.raises(TimeoutError):
            await cache.CacheReader(shared).list(CONFIGMAP)


async def test_freeze_objects_makes_writes_to_cached_objects_fail() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1, labels={"app": "web"})], 10))
    shared, _ = make(transport, freeze_objects=True)
    async with running(shared.start):
        obj = await cache.CacheReader(shared).get(CONFIGMAP, "a", namespace="default")
        with pytest.raises(TypeError, match="read-only"):
            obj["metadata"]["labels"]["app"] = "db"
        assert "managedFields" not in obj["metadata"]  # the configured transform ran first


async def test_a_compact_kind_hands_each_reader_a_copy_of_its_own() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1, labels={"app": "web"})], 10))
    transport.lists.append(page([cm("n", 1)], 10))
    shared, _ = make(
        transport,
        compact=True,
        freeze_objects=True,
        by_kind={NAMESPACE: cache.KindOptions(compact=False)},
    )
    async with running(shared.start):
        reader = cache.CacheReader(shared)
        obj = await reader.get(CONFIGMAP, "a", namespace="default")
        obj["metadata"]["labels"]["app"] = "db"  # a copy: never frozen, and no one else sees it
        again = await reader.get(CONFIGMAP, "a", namespace="default")
        assert again["metadata"]["labels"] == {"app": "web"}
        assert again is not obj
        assert "managedFields" not in again["metadata"]  # the configured transform still runs
        assert (await shared.get_informer(CONFIGMAP)).store.compact
        assert not (await shared.get_informer(NAMESPACE)).store.compact


async def test_readiness_reports_unsynced_informers_and_silent_watches() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    transport.watches.append(errors.TransportError("connection refused"))  # then nothing answers
    shared, clock = make(transport)
    informer = await shared.get_informer(CONFIGMAP)
    assert shared.readiness_problems() == [f"informer {informer.name} has not synced"]
    async with running(shared.start):
        await run_until(clock, lambda: len(transport.watch_calls) == 2)
        assert shared.readiness_problems() == []
        clock.advance(500)
        (problem,) = shared.readiness_problems()
    assert re.search(r"watch v1/configmaps has been silent for 50\ds", problem)
    assert "connection refused" in problem


def test_gc_is_frozen_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(_cache, "_gc_frozen", False)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))

    def collect(generation: int = 2) -> int:
        calls.append(f"collect{generation}")
        return 0

    monkeypatch.setattr(gc, "collect", collect)
    assert cache.freeze_gc_once()
    assert not cache.freeze_gc_once()
    assert calls == ["collect1", "freeze"]


async def test_the_cache_freezes_the_gc_after_its_first_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    frozen: list[bool] = []

    def freeze() -> bool:
        frozen.append(True)
        return True

    monkeypatch.setattr(_cache, "freeze_gc_once", freeze)
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1)], 10))
    shared, clock = make(transport, gc_freeze=True)
    async with running(shared.start):
        informer = await shared.get_informer(CONFIGMAP)
        await run_until(clock, lambda: informer.has_synced and bool(frozen))
    assert frozen == [True]


async def test_informer_health_is_scraped_from_statistics() -> None:
    registry = CollectorRegistry()
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1), cm("b", 2)], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    clock = FakeClock(start=START)
    options = cache.CacheOptions(
        gc_freeze=False, reflector=cache.ReflectorOptions(list_mode=cache.ListMode.PAGED)
    )
    shared = cache.Cache(transport, Mapper(), options, clock=clock, metrics=cache.CacheMetrics(registry))
    informer = await shared.get_informer(CONFIGMAP)
    labels = {"informer": informer.name, "reflector": informer.name}
    assert registry.get_sample_value("informer_synced", {"informer": informer.name}) == 0.0
    async with running(shared.start):
        await run_until(clock, lambda: live.opened)
        clock.advance(30)
        assert registry.get_sample_value("informer_synced", {"informer": informer.name}) == 1.0
        assert registry.get_sample_value("informer_objects", {"informer": informer.name}) == 2.0
        assert registry.get_sample_value("informer_watch_age_seconds", labels) == pytest.approx(30.0)
        assert registry.get_sample_value("informer_last_event_age_seconds", labels) == pytest.approx(30.0)
        assert registry.get_sample_value("informer_lists_total", labels) == 1.0
        assert registry.get_sample_value("informer_watches_total", labels) == 1.0
        assert registry.get_sample_value("informer_expired_total", labels) == 0.0


async def test_kind_options_of_all_namespaces_no_selector_and_no_transform_beat_the_cache_defaults() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1, "anywhere")], 10))
    transport.watches.append(Watch(end="live"))
    shared, clock = make(
        transport,
        namespaces=("team-a",),
        label_selector="managed=true",
        by_kind={
            CONFIGMAP: cache.KindOptions(
                namespaces=cache.ALL_NAMESPACES, label_selector="", transform=cache.no_transform
            )
        },
    )
    informer = await shared.get_informer(CONFIGMAP)
    async with running(shared.start):
        await run_until(clock, lambda: informer.has_synced)
    (listed,) = transport.list_calls
    assert listed.path == "/api/v1/configmaps", "one watch over every namespace"
    assert "labelSelector" not in listed.params
    stored = informer.get("a", "anywhere")
    assert stored is not None
    assert stored["metadata"]["managedFields"] == [{"manager": "test", "operation": "Apply"}]


async def test_a_custom_transform_shapes_every_object_before_it_is_stored() -> None:
    def without_data(obj: dict[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in obj.items() if key != "data"}

    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1, big="x" * 1000)], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    shared, clock = make(transport, transform=without_data)
    informer = await shared.get_informer(CONFIGMAP)
    heard: list[cache.Object] = []
    informer.add_event_handler(cache.EventHandlerFuncs(on_update=lambda old, new: heard.append(new)))
    async with running(shared.start):
        await run_until(clock, lambda: live.opened)
        live.feed(event("MODIFIED", cm("a", 11, big="y" * 1000)))
        await run_until(clock, lambda: bool(heard))
    stored = informer.get("a", "default")
    assert stored is not None
    assert "data" not in stored
    assert "data" not in heard[0], "handlers see the transformed object too"
