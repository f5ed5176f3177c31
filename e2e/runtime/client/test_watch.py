"""Watches stream changes after a list's resourceVersion, as raw (type, object) events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from olm_runtime.client import Client, WatchEvent, kinds

from .conftest import config_map, namespace_settled


async def _collect(events: AsyncIterator[WatchEvent], count: int) -> list[WatchEvent]:
    seen: list[WatchEvent] = []
    async for event in events:
        if event.type != "BOOKMARK":
            seen.append(event)
        if len(seen) == count:
            break
    return seen


async def test_watch_reports_added_modified_deleted_after_the_list(client: Client, namespace: str) -> None:
    await namespace_settled(client, namespace)
    await client.create(config_map(namespace, "before"))
    listed = await client.list(kinds.CONFIG_MAP, namespace=namespace)

    async with client.watch(
        kinds.CONFIG_MAP, namespace=namespace, resource_version=listed.resource_version, read_timeout=30
    ) as events:
        created = await client.create(config_map(namespace, "w", {"v": "1"}))
        await client.patch(kinds.CONFIG_MAP, "w", {"data": {"v": "2"}}, namespace=namespace)
        await client.delete(kinds.CONFIG_MAP, "w", namespace=namespace)
        seen = await asyncio.wait_for(_collect(events, 3), timeout=30)

    assert [(e.type, e.object["metadata"]["name"]) for e in seen] == [
        ("ADDED", "w"),
        ("MODIFIED", "w"),
        ("DELETED", "w"),
    ]  # "before" is not replayed: the watch starts after the list
    assert seen[0].object["metadata"]["uid"] == created["metadata"]["uid"]
    assert seen[1].object["data"] == {"v": "2"}


async def test_watch_filters_by_label_selector(client: Client, namespace: str) -> None:
    listed = await client.list(kinds.CONFIG_MAP, namespace=namespace)
    since = listed.resource_version
    async with client.watch(
        kinds.CONFIG_MAP, namespace=namespace, label_selector="watched=yes", resource_version=since
    ) as events:
        await client.create(config_map(namespace, "ignored"))
        labelled = config_map(namespace, "seen")
        labelled["metadata"]["labels"] = {"watched": "yes"}
        await client.create(labelled)
        seen = await asyncio.wait_for(_collect(events, 1), timeout=30)
    assert [(e.type, e.object["metadata"]["name"]) for e in seen] == [("ADDED", "seen")]


async def test_watch_with_initial_events_replays_current_state_then_a_bookmark(
    client: Client, namespace: str
) -> None:
    await client.create(config_map(namespace, "existing"))
    async with client.watch(kinds.CONFIG_MAP, namespace=namespace, send_initial_events=True) as events:
        initial: list[str] = []
        async for event in events:
            if event.type == "BOOKMARK":
                annotations = event.object["metadata"].get("annotations") or {}
                if annotations.get("k8s.io/initial-events-end") == "true":
                    break
                continue
            initial.append(event.object["metadata"]["name"])
    assert "existing" in initial


async def test_watch_ends_when_the_server_times_it_out(client: Client, namespace: str) -> None:
    await namespace_settled(client, namespace)
    listed = await client.list(kinds.CONFIG_MAP, namespace=namespace)
    async with client.watch(
        kinds.CONFIG_MAP,
        namespace=namespace,
        resource_version=listed.resource_version,
        allow_bookmarks=False,
        timeout_seconds=1,
    ) as events:
        remaining = [event async for event in events]
    assert remaining == []
