"""Client promises about writes and watches that need the real API server's answer: field managers,
cluster-scoped addressing, what delete returns, background propagation, and how a watch ends."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from olm_runtime.client import Client, PropagationPolicy, errors, kinds
from olm_runtime.testing.poll import eventually

from .conftest import config_map, config_map_absent


def managers(obj: dict[str, Any]) -> set[str]:
    return {entry["manager"] for entry in obj["metadata"].get("managedFields") or ()}


async def test_every_write_records_the_clients_field_manager_unless_a_call_names_another(
    client: Client, namespace: str
) -> None:
    created = await client.create(config_map(namespace, "managed", {"a": "1"}))
    assert managers(created) == {"e2e-admin"}
    patched = await client.patch(
        kinds.CONFIG_MAP, "managed", {"data": {"b": "2"}}, namespace=namespace, field_manager="sidecar"
    )
    assert managers(patched) == {"e2e-admin", "sidecar"}
    updated = await client.update({**patched, "data": {**patched["data"], "c": "3"}})
    assert managers(updated) == {"e2e-admin", "sidecar"}, "the update was recorded as the client's"


async def test_a_cluster_scoped_write_ignores_metadata_namespace(client: Client, namespace: str) -> None:
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name, "namespace": namespace},
        "rules": [],
    }
    created = await client.create(role)
    try:
        assert "namespace" not in created["metadata"]
        assert (await client.get(kinds.CLUSTER_ROLE, name))["metadata"]["uid"] == created["metadata"]["uid"]
    finally:
        await client.delete(kinds.CLUSTER_ROLE, name)


async def test_delete_returns_the_object_while_finalizers_hold_it_and_a_status_once_it_is_gone(
    client: Client, namespace: str
) -> None:
    held = config_map(namespace, "held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await client.create(held)
    await client.create(config_map(namespace, "free"))
    answer = await client.delete(kinds.CONFIG_MAP, "held", namespace=namespace)
    assert answer["kind"] == "ConfigMap"
    assert answer["metadata"]["deletionTimestamp"]
    await client.patch(kinds.CONFIG_MAP, "held", {"metadata": {"finalizers": None}}, namespace=namespace)
    gone = await client.delete(kinds.CONFIG_MAP, "free", namespace=namespace)
    assert gone["kind"] == "Status"
    assert gone["status"] == "Success"


async def test_background_deletion_removes_the_owner_at_once_and_its_dependents_afterwards(
    client: Client, namespace: str
) -> None:
    owner = await client.create(config_map(namespace, "owner"))
    dependent = config_map(namespace, "dependent")
    dependent["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    ]
    await client.create(dependent)
    await client.delete(
        kinds.CONFIG_MAP, "owner", namespace=namespace, propagation_policy=PropagationPolicy.BACKGROUND
    )
    with pytest.raises(errors.NotFound):
        await client.get(kinds.CONFIG_MAP, "owner", namespace=namespace)

    async def dependent_gone() -> bool:
        return await config_map_absent(client, namespace, "dependent")

    await eventually(dependent_gone, what="the garbage collector to delete the dependent")


async def test_a_silent_watch_raises_timeout_error_after_its_read_timeout(
    client: Client, namespace: str
) -> None:
    listed = await client.list(kinds.CONFIG_MAP, namespace=namespace, label_selector="never=matches")
    seen: list[str] = []

    async def drain() -> None:
        async with client.watch(
            kinds.CONFIG_MAP,
            namespace=namespace,
            label_selector="never=matches",
            resource_version=listed.resource_version,
            read_timeout=1.0,
            timeout_seconds=60,
        ) as events:
            async for event in events:
                seen.append(event.type)

    with pytest.raises(TimeoutError):
        await drain()
    assert set(seen) <= {"BOOKMARK"}, "nothing matches the selector"
