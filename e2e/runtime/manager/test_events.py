"""Events recorded through a manager land on the API server, with repeats aggregated into one Event."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Callable
from typing import Any

from olm_runtime.client import Client, kinds
from olm_runtime.events import BroadcasterOptions, EventRecorder
from olm_runtime.manager import Manager, ManagerOptions
from olm_runtime.testing.poll import eventually

REPEATS = 7


async def configmap_subject(client: Client, namespace: str) -> dict[str, Any]:
    """The ConfigMap the events are about."""
    return await client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "subject", "namespace": namespace}}
    )


async def elected_recorder(
    client: Client,
    running: Callable[[Manager], asyncio.Task[None]],
    component: str,
    *,
    series_update_interval: float = BroadcasterOptions.series_update_interval,
) -> tuple[EventRecorder, asyncio.Task[None]]:
    """A recorder of a running manager that has been elected, and the manager's task."""
    events = BroadcasterOptions(series_update_interval=series_update_interval)
    manager = Manager(client, options=ManagerOptions(metrics_bind_address="0", events=events))
    recorder = manager.event_recorder(component)
    task = running(manager)
    await asyncio.wait_for(manager.elected.wait(), 30)
    return recorder, task


async def recorded(client: Client, namespace: str, component: str) -> list[dict[str, Any]]:
    events = await client.list(kinds.EVENTS_EVENT, namespace=namespace)
    return [e for e in events.items if e.get("reportingController") == component]


async def the_one_event(client: Client, namespace: str, component: str, *, what: str) -> dict[str, Any]:
    """Wait until `component` has written exactly one Event in `namespace`, and return it."""

    async def written() -> bool:
        return len(await recorded(client, namespace, component)) == 1

    await eventually(written, what=what, timeout=30)
    (event,) = await recorded(client, namespace, component)
    return event


async def test_identical_events_become_one_event_with_a_series_count(
    client: Client, namespace: str, running: Callable[[Manager], asyncio.Task[None]]
) -> None:
    subject = await configmap_subject(client, namespace)
    recorder, _ = await elected_recorder(client, running, "e2e-recorder", series_update_interval=0.2)

    for _ in range(REPEATS):
        recorder.event(subject, "Warning", "Overheated", "the subject is too hot")
    recorder.event(subject, "Warning", "Overheated", "the subject is on fire")
    recorder.event(subject, "Normal", "Cooled", "the subject cooled down", action="Cooling")

    async def listed() -> list[dict[str, Any]]:
        return await recorded(client, namespace, "e2e-recorder")

    async def aggregated() -> bool:
        hot = [e for e in await listed() if e.get("note") == "the subject is too hot"]
        return len(hot) == 1 and (hot[0].get("series") or {}).get("count") == REPEATS

    await eventually(aggregated, what=f"one Event with series.count {REPEATS}", timeout=30)
    events = await listed()
    assert sorted(e["note"] for e in events) == [
        "the subject cooled down",
        "the subject is on fire",
        "the subject is too hot",
    ]
    hot = next(e for e in events if e["note"] == "the subject is too hot")
    assert hot["type"] == "Warning"
    assert hot["reason"] == hot["action"] == "Overheated"
    assert hot["regarding"]["kind"] == "ConfigMap"
    assert hot["regarding"]["name"] == "subject"
    assert hot["regarding"]["uid"] == subject["metadata"]["uid"]
    assert hot["series"]["lastObservedTime"]
    cooled = next(e for e in events if e["note"] == "the subject cooled down")
    assert (cooled["type"], cooled["action"], cooled.get("series")) == ("Normal", "Cooling", None)

    # The same Event through the core/v1 API, as `kubectl get events` shows it.
    core = await client.get(kinds.EVENT, hot["metadata"]["name"], namespace=namespace)
    assert core["involvedObject"]["name"] == "subject"
    assert core["series"]["count"] == REPEATS


async def test_a_repeat_after_the_event_expired_on_the_server_starts_a_new_event(
    client: Client, namespace: str, running: Callable[[Manager], asyncio.Task[None]]
) -> None:
    subject = await configmap_subject(client, namespace)
    recorder, _ = await elected_recorder(client, running, "e2e-expiry", series_update_interval=0.1)
    recorder.event(subject, "Normal", "Tick", "tick")
    first = await the_one_event(client, namespace, "e2e-expiry", what="the first Event")
    # What the Event TTL does on a real cluster, done at once: the server forgets the Event.
    await client.delete(kinds.EVENTS_EVENT, first["metadata"]["name"], namespace=namespace)

    async def replaced() -> bool:
        # A repeat's series update finds the Event gone; the repeat after that creates a new one.
        recorder.event(subject, "Normal", "Tick", "tick")
        return len(await recorded(client, namespace, "e2e-expiry")) == 1

    await eventually(replaced, what="a new Event for the repeats", timeout=30, interval=0.3)
    (second,) = await recorded(client, namespace, "e2e-expiry")
    assert second["metadata"]["name"] != first["metadata"]["name"]
    assert second["regarding"]["uid"] == subject["metadata"]["uid"]


async def test_stopping_the_manager_writes_the_pending_series_update(
    client: Client, namespace: str, running: Callable[[Manager], asyncio.Task[None]]
) -> None:
    subject = await configmap_subject(client, namespace)
    recorder, task = await elected_recorder(client, running, "e2e-flush", series_update_interval=3600)
    recorder.event(subject, "Warning", "Overheated", "too hot")
    await the_one_event(client, namespace, "e2e-flush", what="the first Event")
    # Two repeats: their series update is due only in an hour, and the manager stops now.
    recorder.event(subject, "Warning", "Overheated", "too hot")
    recorder.event(subject, "Warning", "Overheated", "too hot")
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    (event,) = await recorded(client, namespace, "e2e-flush")
    assert event["series"]["count"] == 3


async def test_events_about_cluster_scoped_objects_are_written_to_default(
    client: Client, running: Callable[[Manager], asyncio.Task[None]]
) -> None:
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    subject = await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        recorder, _ = await elected_recorder(client, running, name)
        recorder.event(subject, "Normal", "Noticed", "a namespace for the test")
        event = await the_one_event(client, "default", name, what="the Event in default")
        assert event["regarding"] == {
            "apiVersion": "v1",
            "kind": "Namespace",
            "name": name,
            "uid": subject["metadata"]["uid"],
            "resourceVersion": subject["metadata"]["resourceVersion"],
        }
        await client.delete(kinds.EVENTS_EVENT, event["metadata"]["name"], namespace="default")
    finally:
        await client.delete(kinds.NAMESPACE, name)
