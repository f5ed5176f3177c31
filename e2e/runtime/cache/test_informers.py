"""Informers against the shared control plane: sync, handlers, metadata-only, indexes, selectors,
and deletions missed while a watch was down."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from olm_runtime import cache
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.poll import eventually

from .conftest import cache_state, configmap, create_all, new_cache, running, server_state

STREAMING = cache.ReflectorOptions(list_mode=cache.ListMode.STREAMING)
MODES = [
    pytest.param(STREAMING, id="streaming-list"),
    pytest.param(
        cache.ReflectorOptions(list_mode=cache.ListMode.STREAMING, cached_first_list=True),
        id="streaming-list-from-the-watch-cache",
    ),
    pytest.param(cache.ReflectorOptions(list_mode=cache.ListMode.PAGED), id="paged-list"),
]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_add(self, obj: cache.Object, is_initial_list: bool) -> None:
        self.events.append(("add", obj["metadata"]["name"], is_initial_list))

    def on_update(self, old: cache.Object, new: cache.Object) -> None:
        self.events.append(("update", new["metadata"]["name"], new["data"].get("v")))

    def on_delete(self, obj: cache.Object | cache.DeletedFinalStateUnknown) -> None:
        if isinstance(obj, cache.DeletedFinalStateUnknown):
            self.events.append(("tombstone", obj.key))
        else:
            self.events.append(("delete", obj["metadata"]["name"]))

    def of(self, name: str) -> list[tuple[Any, ...]]:
        return [e for e in self.events if e[1] == name or e[1].endswith(f"/{name}")]


@pytest.mark.parametrize("options", MODES)
async def test_initial_sync_of_hundreds_of_objects_matches_the_server(
    admin: Client, namespace: str, options: cache.ReflectorOptions
) -> None:
    await create_all(
        admin, (configmap(f"cm-{i:03}", namespace, {"tier": "ab"[i % 2]}, v="0") for i in range(300))
    )
    shared = new_cache(admin, namespaces=(namespace,), reflector=options)
    informer = await shared.get_informer(kinds.CONFIG_MAP)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    async with running(shared):
        await shared.wait_for_cache_sync(timeout=60)
        stats = informer.statistics().reflectors[0]
        if options == STREAMING:
            # A streaming list is as fresh as the server: synced means complete.
            assert cache_state(informer, namespace) == await server_state(admin, namespace)
        else:
            # A first list of resourceVersion "0" reads the watch cache, which may lag the writes
            # just made (as in client-go); the watch brings the rest: eventual consistency.
            async def converged() -> bool:
                return cache_state(informer, namespace) == await server_state(admin, namespace)

            await eventually(converged, what="the cache to converge to the server", timeout=30)
    assert len(informer) == 301  # and kube-root-ca.crt
    assert len(recorder.events) == 301  # one add per object, nothing else
    assert {kind for kind, *_ in recorder.events} == {"add"}
    if options == STREAMING:
        assert all(initial for _, _, initial in recorder.events)
    assert all("managedFields" not in o["metadata"] for o in informer.list())
    if options.list_mode is cache.ListMode.STREAMING:
        # The server took the streaming list, from the watch cache too: no fallback to paging.
        assert (stats.streaming_lists, stats.lists, stats.streaming) == (1, 0, True)
    else:
        assert (stats.streaming_lists, stats.lists) == (0, 1)


async def test_handlers_hear_adds_updates_and_deletes_in_order(admin: Client, namespace: str) -> None:
    shared = new_cache(admin, namespaces=(namespace,))
    informer = await shared.get_informer(kinds.CONFIG_MAP)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    async with running(shared):
        await shared.wait_for_cache_sync(timeout=60)
        await admin.create(configmap("a", namespace, v="1"))
        await admin.create(configmap("b", namespace, v="1"))
        await admin.patch(kinds.CONFIG_MAP, "a", {"data": {"v": "2"}}, namespace=namespace)
        await admin.patch(kinds.CONFIG_MAP, "a", {"data": {"v": "3"}}, namespace=namespace)
        await admin.delete(kinds.CONFIG_MAP, "b", namespace=namespace)

        async def seen_all() -> bool:
            return ("delete", "b") in recorder.events and ("update", "a", "3") in recorder.events

        await eventually(seen_all, what="the handler to see every change")
    assert recorder.of("a") == [("add", "a", False), ("update", "a", "2"), ("update", "a", "3")]
    assert recorder.of("b") == [("add", "b", False), ("delete", "b")]
    assert informer.get("b", namespace) is None


async def test_metadata_only_informers_cache_metadata_and_nothing_else(admin: Client, namespace: str) -> None:
    await admin.create(configmap("big", namespace, {"app": "x"}, payload="x" * 50_000))
    shared = new_cache(admin, namespaces=(namespace,))
    reader = cache.CacheReader(shared)
    async with running(shared):
        meta = await reader.get(kinds.CONFIG_MAP, "big", namespace=namespace, metadata_only=True)
        full = await reader.get(kinds.CONFIG_MAP, "big", namespace=namespace)
        await admin.patch(
            kinds.CONFIG_MAP, "big", {"metadata": {"labels": {"app": "y"}}}, namespace=namespace
        )
        informer = await shared.get_informer(kinds.CONFIG_MAP, metadata_only=True)

        async def relabelled() -> bool:
            obj = informer.get("big", namespace)
            return obj is not None and obj["metadata"]["labels"] == {"app": "y"}

        await eventually(relabelled, what="the metadata-only watch to deliver the new label")
    assert meta["apiVersion"] == "meta.k8s.io/v1"
    assert meta["kind"] == "PartialObjectMetadata"
    assert "data" not in meta
    assert meta["metadata"]["labels"] == {"app": "x"}
    assert "managedFields" not in meta["metadata"]
    assert full["kind"] == "ConfigMap"
    assert len(full["data"]["payload"]) == 50_000
    assert len(shared.informers()) == 2  # the two forms are two caches


async def test_index_lookups_follow_changes(admin: Client, namespace: str) -> None:
    await create_all(admin, (configmap(f"cm-{i}", namespace, {"team": f"t{i % 3}"}) for i in range(9)))
    shared = new_cache(admin, namespaces=(namespace,))
    reader = cache.CacheReader(shared)
    informer = await shared.get_informer(kinds.CONFIG_MAP)
    informer.add_indexers({"by-team": lambda o: [(o["metadata"].get("labels") or {}).get("team", "none")]})
    async with running(shared):

        async def team(value: str) -> list[str]:
            found = await reader.list(kinds.CONFIG_MAP, namespace=namespace, index=("by-team", value))
            return sorted(o["metadata"]["name"] for o in found)

        assert await team("t1") == ["cm-1", "cm-4", "cm-7"]
        await admin.patch(
            kinds.CONFIG_MAP, "cm-1", {"metadata": {"labels": {"team": "t2"}}}, namespace=namespace
        )

        async def moved() -> bool:
            return await team("t1") == ["cm-4", "cm-7"] and "cm-1" in await team("t2")

        await eventually(moved, what="the index to follow the relabelled object")
        assert await team("none") == ["kube-root-ca.crt"]


async def test_label_selector_informers_hold_only_matching_objects_as_labels_change(
    admin: Client, namespace: str
) -> None:
    await create_all(admin, (configmap(f"cm-{i}", namespace, {"tier": "ab"[i % 2]}) for i in range(6)))
    shared = new_cache(admin, namespaces=(namespace,))
    tier_a = await shared.get_informer(kinds.CONFIG_MAP, label_selector="tier in (a)")
    assert tier_a is await shared.get_informer(kinds.CONFIG_MAP, label_selector="tier in (a)")
    recorder = Recorder()
    tier_a.add_event_handler(recorder)
    async with running(shared):
        await shared.wait_for_cache_sync(timeout=60)
        assert sorted(o["metadata"]["name"] for o in tier_a.list()) == ["cm-0", "cm-2", "cm-4"]
        await admin.patch(
            kinds.CONFIG_MAP, "cm-0", {"metadata": {"labels": {"tier": "b"}}}, namespace=namespace
        )
        await admin.patch(
            kinds.CONFIG_MAP, "cm-1", {"metadata": {"labels": {"tier": "a"}}}, namespace=namespace
        )

        async def swapped() -> bool:
            return sorted(o["metadata"]["name"] for o in tier_a.list()) == ["cm-1", "cm-2", "cm-4"]

        await eventually(swapped, what="the selector informer to drop cm-0 and pick up cm-1")
        cached = await cache.CacheReader(shared).list(
            kinds.CONFIG_MAP, namespace=namespace, label_selector="tier=a"
        )
        assert sorted(o["metadata"]["name"] for o in cached) == ["cm-1", "cm-2", "cm-4"]
    assert ("delete", "cm-0") in recorder.events  # leaving the selector is a delete for this informer
    assert ("add", "cm-1", False) in recorder.events


async def test_a_delete_missed_while_the_watch_was_down_arrives_as_a_tombstone_after_the_relist(
    admin: Client, namespace: str
) -> None:
    """The informer's identity loses its RBAC grant, so its short watches cannot reconnect; changes
    made meanwhile reach it only through the relist that follows the restored grant."""
    user = f"cache-e2e-{uuid.uuid4().hex[:6]}"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "configmap-reader", "namespace": namespace},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "configmap-reader", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "configmap-reader"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}],
    }
    await admin.create(role)
    await admin.create(binding)
    await create_all(admin, (configmap(name, namespace, v="1") for name in ("stays", "changes", "goes")))
    reader_client = admin.impersonating(user)
    short_watches = cache.ReflectorOptions(min_watch_timeout=2, max_watch_timeout=2)
    shared = new_cache(reader_client, namespaces=(namespace,), reflector=short_watches)
    informer = await shared.get_informer(kinds.CONFIG_MAP)
    recorder = Recorder()
    informer.add_event_handler(recorder)
    async with running(shared):
        await shared.wait_for_cache_sync(timeout=60)
        await admin.delete(kinds.ROLE_BINDING, "configmap-reader", namespace=namespace)

        async def locked_out() -> bool:
            last = informer.statistics().reflectors[0].last_error or ""
            return "Forbidden" in last

        await eventually(locked_out, what="the informer's reconnect to be forbidden")
        await admin.delete(kinds.CONFIG_MAP, "goes", namespace=namespace)
        await admin.patch(kinds.CONFIG_MAP, "changes", {"data": {"v": "2"}}, namespace=namespace)
        await admin.create(configmap("new", namespace, v="1"))
        await admin.create(binding)

        async def converged() -> bool:
            return cache_state(informer, namespace) == await server_state(admin, namespace)

        await eventually(converged, what="the informer to relist and converge", timeout=90)
    assert recorder.of("goes") == [("add", "goes", True), ("tombstone", f"{namespace}/goes")]
    assert recorder.of("changes") == [("add", "changes", True), ("update", "changes", "2")]
    assert recorder.of("new") == [("add", "new", False)]
    assert recorder.of("stays") == [("add", "stays", True)]
    with pytest.raises(errors.Forbidden):
        await reader_client.list(kinds.SECRET, namespace=namespace)  # the identity really is limited
