"""Events recorded through a manager land on the API server, with repeats aggregated into one Event."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from olm_runtime.client import Client, kinds
from olm_runtime.events import BroadcasterOptions
from olm_runtime.manager import Manager, ManagerOptions
from olm_runtime.testing.poll import eventually

REPEATS = 7


async def test_identical_events_become_one_event_with_a_series_count(
    client: Client, namespace: str, running: Callable[[Manager], asyncio.Task[None]]
) -> None:
    subject = await client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "subject", "namespace": namespace}}
    )
    manager = Manager(
        client,
        options=ManagerOptions(
            metrics_bind_address="0", events=BroadcasterOptions(series_update_interval=0.2)
        ),
    )
    recorder = manager.event_recorder("e2e-recorder")
    running(manager)
    await asyncio.wait_for(manager.elected.wait(), 30)

    for _ in range(REPEATS):
        recorder.event(subject, "Warning", "Overheated", "the subject is too hot")
    recorder.event(subject, "Warning", "Overheated", "the subject is on fire")
    recorder.event(subject, "Normal", "Cooled", "the subject cooled down", action="Cooling")

    async def listed() -> list[dict[str, Any]]:
        events = await client.list(kinds.EVENTS_EVENT, namespace=namespace)
        return [e for e in events.items if e.get("reportingController") == "e2e-recorder"]

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
