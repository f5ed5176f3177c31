"""Predicates filter per watch; handlers map events to Requests."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from olm_runtime import workqueue
from olm_runtime.client.gvk import GroupVersionKind
from olm_runtime.controller import handler, predicate, source
from olm_runtime.controller.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from olm_runtime.controller.reconcile import Request


def obj(name: str = "a", namespace: str = "ns", **metadata: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, **metadata}}


@pytest.mark.parametrize(
    ("pred", "old", "new", "passes"),
    [
        pytest.param(
            predicate.generation_changed, obj(generation=1), obj(generation=2), True, id="generation-bumped"
        ),
        pytest.param(
            predicate.generation_changed, obj(generation=1), obj(generation=1), False, id="status-only"
        ),
        pytest.param(
            predicate.labels_changed, obj(labels={"a": "1"}), obj(labels={"a": "2"}), True, id="label-value"
        ),
        pytest.param(predicate.labels_changed, obj(), obj(labels={}), False, id="no-labels-vs-empty"),
        pytest.param(
            predicate.annotations_changed, obj(annotations={"x": "1"}), obj(), True, id="annotation-removed"
        ),
        pytest.param(
            predicate.resource_version_changed,
            obj(resourceVersion="5"),
            obj(resourceVersion="5"),
            False,
            id="resync-repeat",
        ),
    ],
)
def test_the_built_in_predicates_filter_updates_only(
    pred: predicate.Predicate, old: dict[str, Any], new: dict[str, Any], passes: bool
) -> None:
    assert pred(UpdateEvent(old, new)) is passes
    # Built-ins filter updates only.
    assert pred(CreateEvent(new))
    assert pred(DeleteEvent(old))
    assert pred(GenericEvent(new))


def test_label_selector_passes_updates_leaving_or_entering_the_selection() -> None:
    selected = predicate.label_selector({"team": "a"})
    assert selected(CreateEvent(obj(labels={"team": "a", "x": "y"})))
    assert not selected(CreateEvent(obj(labels={"team": "b"})))
    assert selected(UpdateEvent(obj(labels={"team": "a"}), obj(labels={"team": "b"})))


def test_combinators_short_circuit_in_order() -> None:
    calls: list[str] = []

    def recording(name: str, answer: bool) -> predicate.Predicate:
        def pred(_: object) -> bool:
            calls.append(name)
            return answer

        return pred

    event = GenericEvent(obj())
    assert not predicate.all_of(recording("first", False), recording("second", True))(event)
    assert calls == ["first"]
    assert predicate.any_of(recording("third", True), recording("fourth", False))(event)
    assert calls == ["first", "third"]
    assert predicate.not_(predicate.for_event_types(generic=False))(event)


def test_enqueue_object_maps_both_sides_of_an_update() -> None:
    requests = list(handler.enqueue_object(UpdateEvent(obj("a"), obj("a"))))
    assert requests == [Request("a", "ns"), Request("a", "ns")]
    assert list(handler.enqueue_object(CreateEvent(obj("c", namespace="")))) == [Request("c")]


def test_enqueue_owner_follows_controller_references_of_the_owner_kind() -> None:
    owner_kind = GroupVersionKind("apps", "v1", "Deployment")
    refs = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "controller": True},
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"},
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "controller": True},
        {"apiVersion": "example.com/v1", "kind": "Deployment", "name": "wrong-group", "controller": True},
    ]
    event = CreateEvent(obj("rs", ownerReferences=refs))
    assert list(handler.enqueue_owner(owner_kind)(event)) == [Request("web", "ns")]
    all_owners = handler.enqueue_owner(owner_kind, only_controller=False)
    assert list(all_owners(event)) == [Request("web", "ns"), Request("other", "ns")]
    cluster = handler.enqueue_owner(GroupVersionKind("", "v1", "ConfigMap"), cluster_scoped=True)
    assert list(cluster(event)) == [Request("cm")]


def test_enqueue_mapped_enqueues_what_the_function_returns() -> None:
    mapped = handler.enqueue_mapped(lambda o: [Request(f"{o['metadata']['name']}-x")])
    assert list(mapped(DeleteEvent(obj("a")))) == [Request("a-x")]


def test_matching_filters_every_kind_of_event_by_its_object() -> None:
    big = predicate.matching(lambda o: (o.get("metadata") or {}).get("name", "").startswith("big"))
    assert big(CreateEvent(obj("big-1")))
    assert not big(CreateEvent(obj("small")))
    assert not big(DeleteEvent(obj("small")))
    assert big(GenericEvent(obj("big-2")))
    assert big(UpdateEvent(obj("small"), obj("big-3"))), "an update passes when either side does"
    assert not big(UpdateEvent(obj("small"), obj("tiny")))


def test_label_selector_filters_creates_deletes_and_generic_events_too() -> None:
    selected = predicate.label_selector({"team": "a", "tier": "web"})
    assert not selected(DeleteEvent(obj(labels={"team": "a"}))), "every pair must match"
    assert selected(DeleteEvent(obj(labels={"team": "a", "tier": "web"})))
    assert not selected(GenericEvent(obj()))


def test_for_event_types_lets_only_the_listed_kinds_through() -> None:
    deletes_only = predicate.for_event_types(create=False, update=False, generic=False)
    assert deletes_only(DeleteEvent(obj()))
    assert not deletes_only(CreateEvent(obj()))
    assert not deletes_only(UpdateEvent(obj(), obj()))
    assert not deletes_only(GenericEvent(obj()))


def test_all_of_and_any_of_of_nothing_are_true_and_false() -> None:
    event = GenericEvent(obj())
    assert predicate.all_of()(event)
    assert not predicate.any_of()(event)


async def test_a_predicate_applies_only_to_the_watch_it_is_given_to() -> None:
    queue = workqueue.RateLimitingQueue[Request]()
    update = UpdateEvent(obj("a", generation=1), obj("a", generation=1))
    source.dispatch(update, handler.enqueue_object, [predicate.generation_changed], queue)
    assert len(queue) == 0
    source.dispatch(update, handler.enqueue_mapped(lambda o: [Request("b", "ns")]), [], queue)
    assert [await queue.get()] == [Request("b", "ns")]
    assert len(queue) == 0


async def test_a_channel_source_feeds_generic_events_through_its_predicates_and_handler() -> None:
    events: asyncio.Queue[GenericEvent] = asyncio.Queue()
    queue = workqueue.RateLimitingQueue[Request]()
    channel = source.Channel(events, predicates=[predicate.label_selector({"poll": "yes"})])
    await channel.wait_for_sync()  # nothing to list: synced at once
    task = asyncio.create_task(channel.start(queue))
    try:
        events.put_nowait(GenericEvent(obj("skipped")))
        events.put_nowait(GenericEvent(obj("polled", labels={"poll": "yes"})))
        assert await asyncio.wait_for(queue.get(), 5) == Request("polled", "ns")
        assert events.empty()
        assert len(queue) == 0
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_enqueue_mapped_maps_both_sides_of_an_update() -> None:
    mapped = handler.enqueue_mapped(lambda o: [Request(o["metadata"]["labels"]["app"])])
    old, new = obj("a", labels={"app": "old"}), obj("a", labels={"app": "new"})
    assert list(mapped(UpdateEvent(old, new))) == [Request("old"), Request("new")]
