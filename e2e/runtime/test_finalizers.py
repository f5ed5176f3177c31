"""The finalizer helpers against the real API server: they add and remove only their own finalizer,
a stale read is a Conflict rather than a lost finalizer, and the last removal lets a deletion finish."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

from olm_runtime import finalizers
from olm_runtime.client import Client, errors, kinds

OURS = "example.com/cleanup"
THEIRS = "other.example.com/keep"


async def make_config_map(client: Client, namespace: str, name: str, *existing: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if existing:
        metadata["finalizers"] = list(existing)
    return await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata})


async def stored_finalizers(client: Client, namespace: str, name: str) -> list[str]:
    obj = await client.get(kinds.CONFIG_MAP, name, namespace=namespace)
    return list(obj["metadata"].get("finalizers") or [])


async def release(client: Client, namespace: str, name: str) -> None:
    """Drop every finalizer so the namespace can be deleted after the test."""
    with contextlib.suppress(errors.NotFound):
        await client.patch(kinds.CONFIG_MAP, name, {"metadata": {"finalizers": None}}, namespace=namespace)


async def test_ensure_finalizer_adds_ours_after_the_others_and_returns_the_stored_object(
    admin_client: Client, namespace: str
) -> None:
    obj = await make_config_map(admin_client, namespace, "add", THEIRS)
    try:
        updated = await finalizers.ensure_finalizer(admin_client, kinds.CONFIG_MAP, obj, OURS)
        assert updated["metadata"]["finalizers"] == [THEIRS, OURS]
        assert updated["metadata"]["resourceVersion"] != obj["metadata"]["resourceVersion"]
        assert await stored_finalizers(admin_client, namespace, "add") == [THEIRS, OURS]
    finally:
        await release(admin_client, namespace, "add")


async def test_remove_finalizer_removes_only_ours(admin_client: Client, namespace: str) -> None:
    obj = await make_config_map(admin_client, namespace, "remove", THEIRS, OURS)
    try:
        updated = await finalizers.remove_finalizer(admin_client, kinds.CONFIG_MAP, obj, OURS)
        assert updated["metadata"]["finalizers"] == [THEIRS]
        assert await stored_finalizers(admin_client, namespace, "remove") == [THEIRS]
    finally:
        await release(admin_client, namespace, "remove")


async def test_a_write_from_a_stale_read_is_a_conflict_and_never_drops_a_finalizer_added_meanwhile(
    admin_client: Client, namespace: str
) -> None:
    stale = await make_config_map(admin_client, namespace, "race")
    try:
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
    finally:
        await release(admin_client, namespace, "race")


async def test_a_removal_from_a_stale_read_is_a_conflict(admin_client: Client, namespace: str) -> None:
    stale = await make_config_map(admin_client, namespace, "stale-remove", OURS)
    try:
        await admin_client.patch(
            kinds.CONFIG_MAP, "stale-remove", {"data": {"changed": "yes"}}, namespace=namespace
        )
        with pytest.raises(errors.Conflict):
            await finalizers.remove_finalizer(admin_client, kinds.CONFIG_MAP, stale, OURS)
        assert await stored_finalizers(admin_client, namespace, "stale-remove") == [OURS]
    finally:
        await release(admin_client, namespace, "stale-remove")


async def test_nothing_is_written_when_there_is_nothing_to_do(admin_client: Client, namespace: str) -> None:
    obj = await make_config_map(admin_client, namespace, "noop", OURS)
    try:
        assert await finalizers.ensure_finalizer(admin_client, kinds.CONFIG_MAP, obj, OURS) is obj
        assert await finalizers.remove_finalizer(admin_client, kinds.CONFIG_MAP, obj, THEIRS) is obj
        stored = await admin_client.get(kinds.CONFIG_MAP, "noop", namespace=namespace)
        assert stored["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]
    finally:
        await release(admin_client, namespace, "noop")


async def test_an_object_being_deleted_waits_for_our_finalizer_and_goes_once_it_is_removed(
    admin_client: Client, namespace: str
) -> None:
    await make_config_map(admin_client, namespace, "doomed", OURS)
    try:
        await admin_client.delete(kinds.CONFIG_MAP, "doomed", namespace=namespace)
        held = await admin_client.get(kinds.CONFIG_MAP, "doomed", namespace=namespace)
        assert finalizers.is_being_deleted(held)
        assert finalizers.has_finalizer(held, OURS)
        await finalizers.remove_finalizer(admin_client, kinds.CONFIG_MAP, held, OURS)
        with pytest.raises(errors.NotFound):
            await admin_client.get(kinds.CONFIG_MAP, "doomed", namespace=namespace)
    finally:
        await release(admin_client, namespace, "doomed")


async def test_a_finalizer_cannot_be_added_to_an_object_being_deleted(
    admin_client: Client, namespace: str
) -> None:
    # Why reconcilers check is_being_deleted before ensure_finalizer: the server refuses new ones.
    await make_config_map(admin_client, namespace, "closing", THEIRS)
    try:
        await admin_client.delete(kinds.CONFIG_MAP, "closing", namespace=namespace)
        held = await admin_client.get(kinds.CONFIG_MAP, "closing", namespace=namespace)
        with pytest.raises(errors.Invalid, match="finalizers"):
            await finalizers.ensure_finalizer(admin_client, kinds.CONFIG_MAP, held, OURS)
        assert await stored_finalizers(admin_client, namespace, "closing") == [THEIRS]
    finally:
        await release(admin_client, namespace, "closing")
