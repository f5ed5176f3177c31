"""The Builder's wiring on a real manager and API server: owned objects reconcile their owner,
workers wait for the initial list, and a watch's predicates filter only that watch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olm_runtime import controller
from olm_runtime.client import Client, kinds
from olm_runtime.controller import handler, predicate
from olm_runtime.manager import Manager
from olm_runtime.testing.poll import eventually

from ..reconcilers import add_config_map_controller, recording_names


def config_map(namespace: str, name: str, **labels: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}


async def test_a_change_to_an_owned_object_reconciles_its_controlling_owner(
    admin_client: Client, manager: Manager, start: Callable[[], None], namespace: str
) -> None:
    requests: list[controller.Request] = []

    async def reconcile(request: controller.Request) -> controller.Result:
        requests.append(request)
        return controller.Result()

    await (
        controller.Builder(manager)
        .for_(kinds.CONFIG_MAP)
        .owns(kinds.SECRET)
        .named("owner")
        .complete(controller.ReconcilerFunc(reconcile))
    )
    start()
    parent = await admin_client.create(config_map(namespace, "parent"))
    owner_reference = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "parent",
        "uid": parent["metadata"]["uid"],
        "controller": True,
    }
    await admin_client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "child", "namespace": namespace, "ownerReferences": [owner_reference]},
        }
    )
    key = controller.Request("parent", namespace)

    async def reconciled(times: int) -> bool:
        return requests.count(key) >= times

    await eventually(lambda: reconciled(1), what="the owner to be reconciled", timeout=30)
    before = requests.count(key)
    await admin_client.patch(kinds.SECRET, "child", {"data": {"k": "dmFsdWU="}}, namespace=namespace)
    await eventually(
        lambda: reconciled(before + 1), what="the secret's change to reach its owner", timeout=30
    )
    assert controller.Request("child", namespace) not in requests, "owned objects are not reconciled"


async def test_workers_start_only_after_the_initial_list_has_been_delivered(
    admin_client: Client, manager: Manager, start: Callable[[], None], namespace: str
) -> None:
    names = [f"existing-{i}" for i in range(40)]
    for name in names:
        await admin_client.create(config_map(namespace, name))
    cached_at_first_reconcile: list[int] = []
    reconciled: set[str] = set()

    async def reconcile(request: controller.Request) -> controller.Result:
        if not cached_at_first_reconcile:
            informer = await manager.cache.get_informer(kinds.CONFIG_MAP)
            cached_at_first_reconcile.append(len(informer.list(namespace)))
        reconciled.add(request.name)
        return controller.Result()

    await add_config_map_controller(manager, "initial", reconcile)
    start()

    async def all_reconciled() -> bool:
        return reconciled >= set(names)

    await eventually(all_reconciled, what="every existing object to be reconciled", timeout=30)
    # The namespace's own kube-root-ca.crt is listed too.
    assert cached_at_first_reconcile[0] >= len(names)


async def test_predicates_filter_only_the_watch_they_are_given_to(
    admin_client: Client, manager: Manager, start: Callable[[], None], namespace: str
) -> None:
    requests: list[str] = []
    await (
        controller.Builder(manager)
        .for_(kinds.CONFIG_MAP, predicates=[predicate.label_selector({"watched": "yes"})])
        .watches_kind(
            kinds.SECRET,
            handler.enqueue_mapped(lambda obj: [controller.Request("from-a-secret", namespace)]),
        )
        .named("filtered")
        .complete(controller.ReconcilerFunc(recording_names(requests)))
    )
    start()
    await admin_client.create(config_map(namespace, "ignored"))
    await admin_client.create(config_map(namespace, "watched", watched="yes"))

    async def watched_seen() -> bool:
        return "watched" in requests

    await eventually(watched_seen, what="the labelled ConfigMap to be reconciled", timeout=30)
    await admin_client.create(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": namespace}}
    )

    async def secret_seen() -> bool:
        return "from-a-secret" in requests

    await eventually(secret_seen, what="the unfiltered Secret watch to enqueue", timeout=30)
    # One worker and a FIFO queue: had "ignored" passed the predicate it would have come first.
    assert "ignored" not in requests
    assert "kube-root-ca.crt" not in requests
