"""The finalizer helpers against the real API server: they add and remove only their own finalizer,
a stale read is a Conflict rather than a lost finalizer, and the last removal lets a deletion finish."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Protocol

import pytest

from olm_runtime import finalizers
from olm_runtime.client import Client, errors, kinds

OURS = "example.com/cleanup"
THEIRS = "other.example.com/keep"


async def stored_finalizers(client: Client, namespace: str, name: str) -> list[str]:
    obj = await client.get(kinds.CONFIG_MAP, name, namespace=namespace)
    return list(obj["metadata"].get("finalizers") or [])


async def release(client: Client, namespace: str, name: str) -> None:
    """Drop every finalizer so the namespace can be deleted after the test."""
    with contextlib.suppress(errors.NotFound):
        await client.patch(kinds.CONFIG_MAP, name, {"metadata": {"finalizers": None}}, namespace=namespace)


async def delete_held(client: Client, namespace: str, name: str) -> dict[str, Any]:
    """Delete the ConfigMap `name` and read it again: a finalizer holds it, marked for deletion."""
    await client.delete(kinds.CONFIG_MAP, name, namespace=namespace)
    return await client.get(kinds.CONFIG_MAP, name, namespace=namespace)


class MakeConfigMap(Protocol):
    async def __call__(self, name: str, *existing: str) -> dict[str, Any]: ...


@pytest.fixture
async def config_map(admin_client: Client, namespace: str) -> AsyncIterator[MakeConfigMap]:
    """Create a ConfigMap `name` with the finalizers `existing`; after the test, every one created is
    released, so that the namespace can be deleted."""
    created: list[str] = []

    async def make(name: str, *existing: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {"name": name, "namespace": namespace}
        if existing:
            metadata["finalizers"] = list(existing)
        created.append(name)
        return await admin_client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata})

    yield make
    for name in created:
        await release(admin_client, namespace, name)


async def test_ensure_finalizer_adds_ours_after_the_others_and_returns_the_stored_object(
    admin_client: Client, namespace: str, config_map: MakeConfigMap
) -> None:
    obj = await config_map("add", THEIRS)
    updated = await finalizers.ensure_finalizer(admin_client, kinds.CONFIG_MAP, obj, OURS)
    assert updated["metadata"]["finalizers"] == [THEIRS, OURS]
    assert updated["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]
    assert await stored_finalizers(admin_client, namespace, "add") == [THEIRS, OURS]


async def test_remove_finalizer_removes_only_ours(
    admin_client: Client, namespace: str, config_map: MakeConfigMap
) -> None:
    obj = await config_map("remove", THEIRS, OURS)
    updated = await finalizers.remove_finalizer(admin_client, kinds.CONFIG_MAP, obj, OURS)
    assert updated["metadata"]["finalizers"] == [THEIRS]
    assert await stored_finalizers(admin_client, namespace, "remove") == [THEIRS]


async def test_a_write_from_a_stale_read_is_a_conflict_and_never_drops_a_finalizer_added_meanwhile(
    admin_client: Client, namespace: str, config_map: MakeConfigMap
) -> None:
    stale = await config_map("race")
    # Another controller adds its finalizer after our read.
    await admin_client.patch(
        kinds.CONFIG_MAP, "race", {"metadata": {"finalizers": [THEIRS]}}, namespace=namespace
    )
    with pytest.raises(errors.Conflict):
        await finalizers.ensure_finalizer(admin_client, kinds.CONFIG_MAP, stale, OURS)
    assert await stored_finalizers(admin_client, namespace, "race") == [THEIRS]
    # The retry (the workqueue's job) starts from a fresh read and keeps both.
    fresh = await admin_client.get(kinds.CONFIG_MAP, "race", namespace=namespace)
    await finalizers.ensure_finalizer(admin_client, kinds.CONFIG_MAP, fresh, OURS)
    assert await stored_finalizers(admin_client, namespace, "race") == [THEIRS, OURS]


async def test_a_removal_from_a_stale_read_is_a_conflict(
    admin_client: Client, namespace: str, config_map: MakeConfigMap
) -> None:
    stale = await config_map("stale-remove", OURS)
    await admin_client.patch(
        kinds.CONFIG_MAP, "stale-remove", {"data": {"changed": "yes"}}, namespace=namespace
    )
    with pytest.raises(errors.Conflict):
        await finalizers.remove_finalizer(admin_client, kinds.CONFIG_MAP, stale, OURS)
    assert await stored_finalizers(admin_client, namespace, "stale-remove") == [OURS]


async def test_nothing_is_written_when_there_is_nothing_to_do(
    admin_client: Client, namespace: str, config_map: MakeConfigMap
) -> None:
    obj = await config_map("noop", OURS)
    assert await finalizers.ensure_finalizer(admin_client, kinds.CONFIG_MAP, obj, OURS) is obj
    assert await finalizers.remove_finalizer(admin_client, kinds.CONFIG_MAP, obj, THEIRS) is obj
    stored = await admin_client.get(kinds.CONFIG_MAP, "noop", namespace=namespace)
    assert stored["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


async def test_an_object_being_deleted_waits_for_our_finalizer_and_goes_once_it_is_removed(
    admin_client: Client, namespace: str, config_map: MakeConfigMap
) -> None:
    await config_map("doomed", OURS)
    held = await delete_held(admin_client, namespace, "doomed")
    assert finalizers.is_being_deleted(held)
    assert finalizers.has_finalizer(held, OURS)
    await finalizers.remove_finalizer(admin_client, kinds.CONFIG_MAP, held, OURS)
    with pytest.raises(errors.NotFound):
        await admin_client.get(kinds.CONFIG_MAP, "doomed", namespace=namespace)


async def test_a_finalizer_cannot_be_added_to_an_object_being_deleted(
    admin_client: Client, namespace: str, config_map: MakeConfigMap
) -> None:
    # Why reconcilers check is_being_deleted before ensure_finalizer: the server refuses new ones.
    await config_map("closing", THEIRS)
    held = await delete_held(admin_client, namespace, "closing")
    with pytest.raises(errors.Invalid, match="finalizers"):
        await finalizers.ensure_finalizer(admin_client, kinds.CONFIG_MAP, held, OURS)
    assert await stored_finalizers(admin_client, namespace, "closing") == [THEIRS]
