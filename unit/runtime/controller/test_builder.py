"""Each Builder step is the lower-level call docs/runtime/controller.md says it is.

The manager is a stand-in with the three things the builder uses (`cache`, `client`, `add`); the
cache is a real `Cache` over the scripted transport of the cache's unit tests. A real manager and
API server run the builder in e2e/runtime/controller.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from olm_runtime import cache, controller
from olm_runtime.client.gvk import GroupVersionKind, GroupVersionResource, ResourceInfo
from olm_runtime.controller import handler, predicate, source
from olm_runtime.controller.event import CreateEvent, UpdateEvent
from olm_runtime.controller.reconcile import Request, Result
from unit.runtime.cache.fakes import CONFIGMAPS, FakeTransport

WIDGET = GroupVersionKind("example.com", "v1", "Widget")
CLUSTER_WIDGET = GroupVersionKind("example.com", "v1", "ClusterWidget")
CONFIG_MAP = CONFIGMAPS.gvk


def info(gvk: GroupVersionKind, plural: str, *, namespaced: bool) -> ResourceInfo:
    return ResourceInfo(
        gvk=gvk, gvr=GroupVersionResource(gvk.group, gvk.version, plural), namespaced=namespaced
    )


RESOURCES = {
    CONFIG_MAP: CONFIGMAPS,
    WIDGET: info(WIDGET, "widgets", namespaced=True),
    CLUSTER_WIDGET: info(CLUSTER_WIDGET, "clusterwidgets", namespaced=False),
}


class Mapper:
    async def resource_for(self, gvk: GroupVersionKind) -> ResourceInfo:
        return RESOURCES[gvk]


class FakeManager:
    def __init__(self) -> None:
        self.mapper = Mapper()
        self.cache = cache.Cache(FakeTransport(), self.mapper, cache.CacheOptions(gc_freeze=False))
        self.client: Any = self.mapper  # the builder asks the client only for resource_for
        self.added: list[Any] = []

    def add(self, runnable: Any) -> None:
        self.added.append(runnable)


class Noop:
    async def reconcile(self, request: Request) -> Result:
        return Result()


def owned(owner_api_version: str, owner_kind: str, *, controller_ref: bool = True) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "child",
            "namespace": "ns",
            "ownerReferences": [
                {
                    "apiVersion": owner_api_version,
                    "kind": owner_kind,
                    "name": "parent",
                    "uid": "u",
                    "controller": controller_ref,
                }
            ],
        }
    }


async def test_for_watches_the_kind_with_enqueue_object_and_its_own_predicates() -> None:
    manager = FakeManager()
    built = await (
        controller.Builder(manager)
        .for_(WIDGET, predicates=[predicate.generation_changed], label_selector="tier=web")
        .complete(Noop())
    )
    (watch,) = built.sources
    assert isinstance(watch, source.Kind)
    assert (watch.gvk, watch.handler, watch.predicates) == (
        WIDGET,
        handler.enqueue_object,
        (predicate.generation_changed,),
    )
    assert watch.label_selector == "tier=web"


async def test_complete_creates_the_informers_at_once_and_adds_the_controller_to_the_manager() -> None:
    manager = FakeManager()
    built = await controller.Builder(manager).for_(WIDGET).owns(CONFIG_MAP).complete(Noop())
    assert manager.added == [built]
    assert {informer.resource.gvk for informer in manager.cache.informers()} == {WIDGET, CONFIG_MAP}


async def test_the_default_name_is_the_lower_cased_for_kind_and_named_overrides_it() -> None:
    assert (await controller.Builder(FakeManager()).for_(WIDGET).complete(Noop())).name == "widget"
    named = await controller.Builder(FakeManager()).named("sizer").for_(WIDGET).complete(Noop())
    assert named.name == "sizer"


async def test_owns_enqueues_the_for_object_that_controls_a_changed_object() -> None:
    manager = FakeManager()
    built = await (
        controller.Builder(manager)
        .for_(WIDGET)
        .owns(CONFIG_MAP, predicates=[predicate.labels_changed])
        .complete(Noop())
    )
    _, owned_watch = built.sources
    assert isinstance(owned_watch, source.Kind)
    assert owned_watch.gvk == CONFIG_MAP
    assert owned_watch.predicates == (predicate.labels_changed,)
    assert list(owned_watch.handler(CreateEvent(owned("example.com/v1", "Widget")))) == [
        Request("parent", "ns")
    ]
    # Owners of another kind, and owners that are not the controller, are not enqueued.
    assert list(owned_watch.handler(CreateEvent(owned("example.com/v1", "Gadget")))) == []
    not_controller = owned("example.com/v1", "Widget", controller_ref=False)
    assert list(owned_watch.handler(CreateEvent(not_controller))) == []


async def test_owns_with_only_controller_false_enqueues_every_owner_of_the_for_kind() -> None:
    manager = FakeManager()
    built = await (
        controller.Builder(manager).for_(WIDGET).owns(CONFIG_MAP, only_controller=False).complete(Noop())
    )
    not_controller = owned("example.com/v1", "Widget", controller_ref=False)
    assert list(built.sources[1].handler(CreateEvent(not_controller))) == [  # type: ignore[attr-defined]
        Request("parent", "ns")
    ]


async def test_owns_a_cluster_scoped_for_kind_enqueues_requests_without_a_namespace() -> None:
    manager = FakeManager()
    built = await controller.Builder(manager).for_(CLUSTER_WIDGET).owns(CONFIG_MAP).complete(Noop())
    event = CreateEvent(owned("example.com/v1", "ClusterWidget"))
    assert list(built.sources[1].handler(event)) == [Request("parent")]  # type: ignore[attr-defined]


async def test_an_owner_change_reconciles_both_the_old_and_the_new_owner() -> None:
    manager = FakeManager()
    built = await controller.Builder(manager).for_(WIDGET).owns(CONFIG_MAP).complete(Noop())
    before = owned("example.com/v1", "Widget")
    after = owned("example.com/v1", "Widget")
    after["metadata"]["ownerReferences"][0]["name"] = "adopter"
    requests = list(built.sources[1].handler(UpdateEvent(before, after)))  # type: ignore[attr-defined]
    assert requests == [Request("parent", "ns"), Request("adopter", "ns")]


async def test_watches_kind_uses_the_given_handler_and_watches_takes_any_source() -> None:
    manager = FakeManager()
    mapped = handler.enqueue_mapped(lambda obj: [Request("all-widgets")])
    channel = source.Channel(asyncio.Queue())
    built = await (
        controller.Builder(manager)
        .for_(WIDGET)
        .watches_kind(CONFIG_MAP, mapped, metadata_only=True)
        .watches(channel)
        .complete(Noop())
    )
    _, config_maps, last = built.sources
    assert isinstance(config_maps, source.Kind)
    assert (config_maps.gvk, config_maps.handler, config_maps.metadata_only) == (CONFIG_MAP, mapped, True)
    assert last is channel


async def test_with_options_reaches_the_controller() -> None:
    options = controller.Options(max_concurrent_reconciles=4, reconcile_timeout=30)
    built = await controller.Builder(FakeManager()).for_(WIDGET).with_options(options).complete(Noop())
    assert built.options is options


async def test_misuse_is_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="only once"):
        controller.Builder(FakeManager()).for_(WIDGET).for_(CONFIG_MAP)
    with pytest.raises(ValueError, match="owns needs for_"):
        await controller.Builder(FakeManager()).owns(CONFIG_MAP).complete(Noop())
    with pytest.raises(ValueError, match="watches nothing"):
        await controller.Builder(FakeManager()).complete(Noop())
    with pytest.raises(ValueError, match="needs a name"):
        await controller.Builder(FakeManager()).watches(source.Channel(asyncio.Queue())).complete(Noop())
    manager = FakeManager()
    await (
        controller.Builder(manager).named("poller").watches(source.Channel(asyncio.Queue())).complete(Noop())
    )
    assert [c.name for c in manager.added] == ["poller"]
