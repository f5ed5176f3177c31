"""What an informer promises its event handlers (docs/runtime/cache.md, "Informers and handlers")."""

from __future__ import annotations

from olm_runtime import cache
from olm_runtime.client import errors
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


def by_colour(obj: cache.Object) -> list[str]:
    return [obj["data"]["colour"]] if "colour" in obj.get("data", {}) else []


class StoreWitness:
    """A handler that records what the informer's store and index say at the moment it is called."""

    def __init__(self, informer: cache.Informer) -> None:
        self.informer = informer
        self.seen: list[tuple[str, str, str | None, list[str]]] = []

    def _look(self, what: str, name: str) -> None:
        cached = self.informer.get(name, "default")
        version = cached["metadata"]["resourceVersion"] if cached is not None else None
        red = sorted(o["metadata"]["name"] for o in self.informer.by_index("colour", "red"))
        self.seen.append((what, name, version, red))

    def on_add(self, obj: cache.Object, is_initial_list: bool) -> None:
        self._look("add", obj["metadata"]["name"])

    def on_update(self, old: cache.Object, new: cache.Object) -> None:
        self._look("update", new["metadata"]["name"])

    def on_delete(self, obj: cache.Object | cache.DeletedFinalStateUnknown) -> None:
        target = obj.obj if isinstance(obj, cache.DeletedFinalStateUnknown) else obj
        self._look("delete", target["metadata"]["name"])


async def test_handlers_run_after_the_store_and_its_indexes_are_updated() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1, colour="red")], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    informer, clock = new_informer(transport, indexers={"colour": by_colour})
    witness = StoreWitness(informer)
    informer.add_event_handler(witness)
    async with running(informer.start):
        await run_until(clock, lambda: live.opened)
        live.feed(event("MODIFIED", cm("a", 11, colour="blue")))
        live.feed(event("ADDED", cm("b", 12, colour="red")))
        live.feed(event("DELETED", cm("b", 13, colour="red")))
        await run_until(clock, lambda: len(witness.seen) == 4)
    assert witness.seen == [
        ("add", "a", "1", ["a"]),
        ("update", "a", "11", []),
        ("add", "b", "12", ["b"]),
        ("delete", "b", None, []),
    ]


async def test_has_synced_waits_for_the_first_list_of_every_watched_namespace() -> None:
    transport = FakeTransport()
    transport.lists.extend(
        [
            page([cm("a", 1, "team-a")], 10),
            errors.ServiceUnavailable(503, "ServiceUnavailable", "etcd is busy"),  # team-b's first list
            page([cm("b", 2, "team-b")], 20),
        ]
    )
    transport.watches.extend([Watch(end="live"), Watch(end="live")])
    informer, clock = new_informer(transport, namespaces=["team-b", "team-a"])
    registration = informer.add_event_handler(StoreWitness(informer))
    async with running(informer.start):
        await run_until(clock, lambda: len(transport.list_calls) == 2 and len(informer) == 1)
        assert not informer.has_synced, "synced while team-b had not listed"
        assert not registration.has_synced
        await run_until(clock, lambda: informer.has_synced)
        assert registration.has_synced
        assert sorted(o["metadata"]["name"] for o in informer.list()) == ["a", "b"]
    assert [c.path for c in transport.list_calls] == [
        "/api/v1/namespaces/team-a/configmaps",
        "/api/v1/namespaces/team-b/configmaps",
        "/api/v1/namespaces/team-b/configmaps",
    ]


async def test_a_handler_registered_after_the_sync_is_synced_once_it_returns() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1), cm("b", 2)], 10))
    transport.watches.append(Watch(end="live"))
    informer, clock = new_informer(transport)
    async with running(informer.start):
        await run_until(clock, lambda: informer.has_synced)
        heard: list[tuple[str, bool]] = []
        registration = informer.add_event_handler(
            cache.EventHandlerFuncs(
                on_add=lambda obj, initial: heard.append((obj["metadata"]["name"], initial))
            )
        )
        assert sorted(heard) == [("a", True), ("b", True)], (
            "the replay happens before add_event_handler returns"
        )
        assert registration.has_synced


async def test_a_resync_period_below_one_second_is_raised_to_one_second() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1)], 10))
    transport.watches.append(Watch(end="live"))
    informer, clock = new_informer(transport)
    resyncs: list[float] = []

    def on_update(old: cache.Object, new: cache.Object) -> None:
        assert old is new, "a resync redelivers the cached object itself"
        resyncs.append(clock.now())

    informer.add_event_handler(cache.EventHandlerFuncs(on_update=on_update), resync_period=0.01)
    start = clock.now()
    async with running(informer.start):
        await run_until(clock, lambda: len(resyncs) == 3)
    assert [round(t - start, 6) for t in resyncs] == [1.0, 2.0, 3.0]
    assert len(transport.list_calls) == 1, "a resync makes no API call"


async def test_an_index_added_after_start_covers_cached_objects_and_follows_changes() -> None:
    transport = FakeTransport()
    transport.lists.append(page([cm("a", 1, colour="red"), cm("b", 2, colour="green")], 10))
    live = Watch(end="live")
    transport.watches.append(live)
    informer, clock = new_informer(transport)
    async with running(informer.start):
        await run_until(clock, lambda: live.opened)
        informer.add_indexers({"colour": by_colour})
        assert [o["metadata"]["name"] for o in informer.by_index("colour", "red")] == ["a"]
        live.feed(event("MODIFIED", cm("b", 11, colour="red")))
        await run_until(clock, lambda: len(informer.by_index("colour", "red")) == 2)
        assert informer.by_index("colour", "green") == []


async def test_a_delete_and_recreate_missed_during_a_disconnection_looks_like_an_update() -> None:
    # Not a promise but its absence: objects are keyed by namespace/name, so a handler that cares
    # must compare metadata.uid itself.
    transport = FakeTransport()
    recreated = cm("a", 12)
    recreated["metadata"]["uid"] = "uid-of-the-new-object"
    transport.lists.extend([page([cm("a", 1)], 10), page([recreated], 20)])
    transport.watches.extend([Watch([error_event(410, "Expired")]), Watch(end="live")])
    informer, clock = new_informer(transport)
    heard: list[tuple[str, str, str]] = []
    informer.add_event_handler(
        cache.EventHandlerFuncs(
            on_add=lambda obj, initial: heard.append(("add", "", obj["metadata"]["uid"])),
            on_update=lambda old, new: heard.append(
                ("update", old["metadata"]["uid"], new["metadata"]["uid"])
            ),
            on_delete=lambda obj: heard.append(("delete", "", "")),
        )
    )
    async with running(informer.start):
        await run_until(clock, lambda: len(transport.list_calls) == 2 and len(heard) == 2)
    assert heard == [("add", "", "uid-default-a"), ("update", "uid-default-a", "uid-of-the-new-object")]
