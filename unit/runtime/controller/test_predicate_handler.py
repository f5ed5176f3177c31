"""Predicates filter per watch; handlers map events to Requests."""

from __future__ import annotations

from typing import Any

import pytest

from olm_runtime.client.gvk import GroupVersionKind
from olm_runtime.controller import handler, predicate
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
def test_update_predicates(
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


def test_enqueue_mapped() -> None:
    mapped = handler.enqueue_mapped(lambda o: [Request(f"{o['metadata']['name']}-x")])
    assert list(mapped(DeleteEvent(obj("a")))) == [Request("a-x")]
