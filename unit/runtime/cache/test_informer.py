"""Informers: the store follows the reflectors; handlers hear about every change, in order, once."""

from __future__ import annotations

from typing import Any

import pytest

from olm_runtime import cache
from olm_runtime.clock import FakeClock
from unit.runtime.cache.fakes import (
    FakeTransport,
    Watch,
    cm,
    error_event,
    event,
    new_informer,
    page,
    run_until,
    running,
)


class Recorder:
    """An event handler that writes down what it hears, with names and resourceVersions."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_add(self, obj: cache.Object, is_initial_list: bool) -> None:
        self.events.append(("add", obj["metadata"]["name"], is_initial_list))

    def on_update(self, old: cache.Object, new: cache.Object) -> None:
        self.events.append(
            (
                "update",
                new["metadata"]["name"],
                old["metadata"]["resourceVersion"],
                new["metadata"]["resourceVersion"],
            )
        )

    def on_delete(self, obj: cache.Object | cache.DeletedFinalStateUnknown) -> None:
        if isinstance(obj, cache.DeletedFinalStateUnknown):
            self.events.append(("tombstone", obj.key, obj.obj["metadata"]["resourceVersion"]))
        else:
            self.events.append(("delete", obj["metadata"]["name"]))


def make(transport: FakeTransport, **kwargs: Any) -> tuple[cache.Informer, FakeClock]:
    kwargs.setdefault("transform", cache.strip_managed_fields)
    return new_informer(transport, **kwargs)


async def test_handlers_see_the_initial_list_then_watch_events_and_tombstones_after_a_relist() -> None:
    transport = FakeTransport()
    transport.lists.extend(
        [
            page([cm("a", 1), cm("b", 2), cm("c", 3)], 10),
            # while the watch was down: b changed, c was deleted, d was created; a is unchanged
            page([cm("a", 1), cm("b", 12), cm("d", 13)], 14),
        ]
    )
    second = Watch(end="live")
    transport.watches.extend([Watch([event("MODIFIED", cm("a", 11)), error_event(410, "Expired")]), second])
    informer, clock = make(transport)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    async with running(informer.start):
        await run_until(clock, lambda: second.opened)
        assert recorder.events == [
            ("add", "a", True),
            ("add", "b", True),
            ("add", "c", True),
            ("update", "a", "1", "11"),
            # the relist: a went back to the listed state (rv 1 differs from 11), b changed, d is new
            ("update", "a", "11", "1"),
            ("update", "b", "2", "12"),
            ("add", "d", False),
            ("tombstone", "default/c", "3"),
        ]
        assert sorted(o["metadata"]["name"] for o in informer.list()) == ["a", "b", "d"]
        second.feed(event("DELETED", cm("d", 15)))
        await run_until(clock, lambda: recorder.events[-1] == ("delete", "d"))
        assert informer.get("d", "default") is None


async def test_a_relist_does_not_notify_objects_whose_resource_version_did_not_change() -> None:
    transport = FakeTransport()
    transport.lists.extend([page([cm("a", 1)], 10), page([cm("a", 1)], 20)])
    second = Watch(end="live")
    transport.watches.extend([Watch([error_event(410, "Expired")]), second])
    informer, clock = make(transport)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    async with running(informer.start):
        await run_until(clock, lambda: second.opened)
    assert recorder.events == [("add", "a", True)]


async def test_wait_for_sync_times_out_while_the_first_list_is_pending() -> None:
    transport = FakeTransport()  # the list never answers
    informer, clock = make(transport)
    async with running(informer.start):
        await run_until(clock, lambda: len(transport.list_calls) == 1)
        assert not informer.has_synced
        with pytest.raises(TimeoutError):
            await informer.wait_for_sync(timeout=0.01)


async def test_has_synced_once_the_first_list_reached_every_handler() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1)], 10))
    transport.watches.append(Watch(end="live"))
    informer, clock = make(transport)
    registration = informer.add_event_handler(Recorder())
    assert not registration.has_synced
    async with running(informer.start):
        await run_until(clock, lambda: informer.has_synced)
        await informer.wait_for_sync(timeout=1)
        assert registration.has_synced


async def test_wait_for_sync_raises_when_the_informer_stops_first() -> None:
    transport = FakeTransport()
    informer, clock = make(transport)
    async with running(informer.start):
        await run_until(clock, lambda: len(transport.list_calls) == 1)
    with pytest.raises(cache.InformerStopped):
        await informer.wait_for_sync(timeout=1)


async def test_a_handler_added_after_start_first_gets_adds_for_cached_objects() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1), cm("b", 2)], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    informer, clock = make(transport)
    async with running(informer.start):
        await run_until(clock, lambda: live.opened)
        late = Recorder()
        registration = informer.add_event_handler(late)
        assert registration.has_synced
        assert late.events == [("add", "a", True), ("add", "b", True)]
        live.feed(event("ADDED", cm("c", 11)))
        await run_until(clock, lambda: len(late.events) == 3)
    assert late.events[-1] == ("add", "c", False)


async def test_a_failing_handler_does_not_stop_the_others_or_the_watch() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1)], 10))
    live = Watch([event("ADDED", cm("b", 11))], "live")
    transport.watches.append(live)
    informer, clock = make(transport)

    def explode(obj: cache.Object, initial: bool) -> None:
        raise RuntimeError("handler bug")

    informer.add_event_handler(cache.EventHandlerFuncs(on_add=explode))
    good = Recorder()
    informer.add_event_handler(good)
    async with running(informer.start):
        await run_until(clock, lambda: len(good.events) == 2)
        assert informer.statistics().handler_errors == 2


async def test_removed_handlers_hear_nothing_more() -> None:
    transport = FakeTransport()
    transport.lists.append(page([], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    informer, clock = make(transport)
    recorder = Recorder()
    registration = informer.add_event_handler(recorder)
    async with running(informer.start):
        await run_until(clock, lambda: live.opened)
        informer.remove_event_handler(registration)
        live.feed(event("ADDED", cm("a", 11)))
        await run_until(clock, lambda: informer.get("a", "default") is not None)
    assert recorder.events == []


async def test_resync_redelivers_every_cached_object_as_an_update_with_old_equal_new() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1), cm("b", 2)], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    informer, clock = make(transport)
    resynced = Recorder()
    plain = Recorder()
    informer.add_event_handler(resynced, resync_period=60.0)
    informer.add_event_handler(plain)
    async with running(informer.start):
        await run_until(clock, lambda: live.opened)
        start = clock.now()
        await run_until(clock, lambda: len(resynced.events) == 4)
        assert clock.now() - start == pytest.approx(60.0, abs=1e-6)
    assert resynced.events[2:] == [("update", "a", "1", "1"), ("update", "b", "2", "2")]
    assert plain.events == [("add", "a", True), ("add", "b", True)]


async def test_a_handler_that_asks_for_resyncs_after_the_informer_started_gets_them() -> None:
    # No handler wants resyncs at start, so no resync loop runs until this one arrives.
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1)], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    informer, clock = make(transport)
    informer.add_event_handler(Recorder())
    resynced = Recorder()
    async with running(informer.start):
        await run_until(clock, lambda: live.opened)
        informer.add_event_handler(resynced, resync_period=30.0)
        start = clock.now()
        await run_until(clock, lambda: len(resynced.events) == 3)
        assert clock.now() - start == pytest.approx(60.0, abs=1e-6)
    assert resynced.events == [("add", "a", True), ("update", "a", "1", "1"), ("update", "a", "1", "1")]


async def test_one_reflector_per_namespace_each_relist_replacing_only_its_own_objects() -> None:
    transport = FakeTransport()

    def answer(call: Any) -> bytes:
        namespace = call.path.split("/")[4]
        return page([cm(f"x-{namespace}", 1, namespace)], 10)

    transport.lists.extend([answer] * 4)
    expired = [Watch([error_event(410, "Expired")]) for _ in range(2)]
    live = [Watch(end="live") for _ in range(2)]
    transport.watches.extend([*expired, *live])
    informer, clock = make(transport, namespaces=["ns2", "ns1", "ns1"])
    recorder = Recorder()
    informer.add_event_handler(recorder)
    async with running(informer.start):
        await run_until(clock, lambda: all(w.opened for w in live))
    assert sorted(c.path for c in transport.list_calls) == [
        "/api/v1/namespaces/ns1/configmaps",
        "/api/v1/namespaces/ns1/configmaps",
        "/api/v1/namespaces/ns2/configmaps",
        "/api/v1/namespaces/ns2/configmaps",
    ]
    assert sorted(o["metadata"]["name"] for o in informer.list()) == ["x-ns1", "x-ns2"]
    assert [o["metadata"]["name"] for o in informer.list("ns1")] == ["x-ns1"]
    assert sorted(recorder.events) == [("add", "x-ns1", True), ("add", "x-ns2", True)]  # no tombstones
    assert len(informer.statistics().reflectors) == 2


async def test_list_filters_by_namespace_and_label_selector_and_indexes_answer_lookups() -> None:
    transport = FakeTransport()
    transport.lists.append(
        page(
            [
                cm("a", 1, "ns1", {"app": "web"}),
                cm("b", 2, "ns1", {"app": "db"}),
                cm("c", 3, "ns2", {"app": "web"}),
            ],
            10,
        )
    )
    live = Watch(end="live")
    transport.watches.append(live)
    informer, clock = make(transport, indexers={"by-app": lambda o: [o["metadata"]["labels"]["app"]]})
    async with running(informer.start):
        await run_until(clock, lambda: live.opened)
        web = cache.parse_selector("app=web")
        assert sorted(o["metadata"]["name"] for o in informer.list(label_selector=web)) == ["a", "c"]
        assert [o["metadata"]["name"] for o in informer.list("ns1", web)] == ["a"]
        assert sorted(o["metadata"]["name"] for o in informer.by_index("by-app", "web")) == ["a", "c"]
        live.feed(event("MODIFIED", cm("c", 11, "ns2", {"app": "db"})))
        await run_until(clock, lambda: len(informer.by_index("by-app", "db")) == 2)
        assert [o["metadata"]["name"] for o in informer.by_index("by-app", "web")] == ["a"]
        informer.add_indexers(
            {
                "by-namespace-and-app": lambda o: [
                    f"{o['metadata']['namespace']}/{o['metadata']['labels']['app']}"
                ]
            }
        )
        assert [o["metadata"]["name"] for o in informer.by_index("by-namespace-and-app", "ns2/db")] == ["c"]


async def test_an_index_function_that_raises_leaves_the_object_out_and_the_informer_running() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("good", 1, labels={"app": "x"}), cm("bad", 2)], 10))
    live = Watch([event("ADDED", cm("later", 11, labels={"app": "y"}))], "live")
    transport.watches.append(live)
    informer, clock = make(transport, indexers={"by-app": lambda o: [o["metadata"]["labels"]["app"]]})
    async with running(informer.start):
        await run_until(clock, lambda: informer.get("later", "default") is not None)
    assert informer.get("bad", "default") is None
    assert informer.get("good", "default") is not None
