"""What the event recorder sends, checked against a recording stand-in for the two client calls it
makes (create and patch). Whether the API server accepts and aggregates them is e2e's job."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from olm_runtime import events
from olm_runtime.client import errors
from olm_runtime.testing.poll import eventually

WIDGET = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {"name": "w", "namespace": "ns", "uid": "u-1", "resourceVersion": "7"},
}


class Recording:
    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.patched: list[tuple[str, dict[str, Any]]] = []
        self.fail_creates = False

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.fail_creates:
            raise errors.Forbidden(403, "Forbidden", "no")
        self.created.append(body)
        return body

    async def patch(self, gvk: Any, name: str, patch: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.patched.append((name, patch))
        return {}


def broadcaster(client: Recording, **options: Any) -> events.EventBroadcaster:
    settings = {"series_update_interval": 0.01, **options}
    return events.EventBroadcaster(
        client,  # type: ignore[arg-type]
        options=events.BroadcasterOptions(**settings),
        instance="pod-1",
    )


async def poll(condition: Any) -> None:
    async def check() -> bool:
        return bool(condition())

    await eventually(check, what="the broadcaster to write", timeout=5, interval=0.005)


async def run_until(broadcast: events.EventBroadcaster, condition: Any) -> None:
    task = asyncio.create_task(broadcast.start())
    try:
        await poll(condition)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_the_first_occurrence_creates_an_events_k8s_io_event() -> None:
    client = Recording()
    broadcast = broadcaster(client)
    broadcast.recorder("widgets").event(WIDGET, "Warning", "InvalidSpec", "size must be positive")
    await run_until(broadcast, lambda: client.created)
    (body,) = client.created
    assert body["apiVersion"] == "events.k8s.io/v1"
    assert body["metadata"]["namespace"] == "ns"
    assert body["metadata"]["name"].startswith("w.")
    assert body["regarding"] == {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "namespace": "ns",
        "name": "w",
        "uid": "u-1",
        "resourceVersion": "7",
    }
    assert (body["type"], body["reason"], body["action"], body["note"]) == (
        "Warning",
        "InvalidSpec",
        "InvalidSpec",
        "size must be positive",
    )
    assert (body["reportingController"], body["reportingInstance"]) == ("widgets", "pod-1")
    assert body["eventTime"].endswith("Z")
    assert "series" not in body


async def test_repeats_become_one_series_with_the_total_count() -> None:
    client = Recording()
    broadcast = broadcaster(client)
    recorder = broadcast.recorder("widgets")
    newer = {**WIDGET, "metadata": {**WIDGET["metadata"], "resourceVersion": "8"}}
    for obj in (WIDGET, WIDGET, newer, WIDGET):  # a new resourceVersion is still the same object
        recorder.event(obj, "Normal", "Scaled", "scaled to 3")
    await run_until(broadcast, lambda: client.patched and client.patched[-1][1]["series"]["count"] == 4)
    assert len(client.created) == 1
    name, patch = client.patched[-1]
    assert name == client.created[0]["metadata"]["name"]
    assert patch["series"]["lastObservedTime"].endswith("Z")


@pytest.mark.parametrize(
    ("change", "value"),
    [
        pytest.param("message", "scaled to 4", id="another-message"),
        pytest.param("reason", "Shrunk", id="another-reason"),
        pytest.param("type", "Warning", id="another-type"),
    ],
)
async def test_different_events_are_not_aggregated(change: str, value: str) -> None:
    client = Recording()
    broadcast = broadcaster(client)
    recorder = broadcast.recorder("widgets")
    first = {"type": "Normal", "reason": "Scaled", "message": "scaled to 3"}
    recorder.event(WIDGET, **first)  # type: ignore[arg-type]
    recorder.event(WIDGET, **{**first, change: value})  # type: ignore[arg-type]
    await run_until(broadcast, lambda: len(client.created) == 2)
    assert client.patched == []


async def test_a_full_buffer_drops_new_occurrences_without_raising() -> None:
    client = Recording()
    broadcast = broadcaster(client, buffer_size=2)
    recorder = broadcast.recorder("widgets")
    for i in range(5):
        recorder.event(WIDGET, "Normal", "Tick", f"tick {i}")
    assert broadcast.dropped == 3
    await run_until(broadcast, lambda: len(client.created) == 2)
    assert [body["note"] for body in client.created] == ["tick 0", "tick 1"]


async def test_failed_writes_are_counted_and_dropped() -> None:
    client = Recording()
    client.fail_creates = True
    broadcast = broadcaster(client)
    broadcast.recorder("widgets").event(WIDGET, "Normal", "Tick", "tick")
    await run_until(broadcast, lambda: broadcast.failed == 1)


async def test_cancellation_flushes_pending_series() -> None:
    client = Recording()
    broadcast = broadcaster(client, series_update_interval=3600)
    recorder = broadcast.recorder("widgets")
    task = asyncio.create_task(broadcast.start())
    recorder.event(WIDGET, "Normal", "Tick", "tick")
    recorder.event(WIDGET, "Normal", "Tick", "tick")
    await poll(lambda: client.created and not broadcast._buffer)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert [patch["series"]["count"] for _, patch in client.patched] == [2]


def test_long_messages_are_cut_to_one_kibibyte_of_utf8() -> None:
    client = Recording()
    broadcast = broadcaster(client)
    broadcast.recorder("widgets").event(WIDGET, "Normal", "Long", "é" * 2000)
    note = broadcast._buffer[0].body["note"]
    assert len(note.encode()) <= 1024
    assert note.endswith("...")


@pytest.mark.parametrize(
    ("obj", "kwargs", "message"),
    [
        pytest.param({"kind": "Widget", "metadata": {"name": "w"}}, {}, "apiVersion", id="no-api-version"),
        pytest.param(WIDGET, {"type": "Error"}, "Normal", id="unknown-type"),
        pytest.param(WIDGET, {"reason": ""}, "reason", id="no-reason"),
    ],
)
def test_calls_that_are_wrong_in_themselves_raise(
    obj: dict[str, Any], kwargs: dict[str, Any], message: str
) -> None:
    recorder = broadcaster(Recording()).recorder("widgets")
    call = {"type": "Normal", "reason": "R", "message": "m", **kwargs}
    with pytest.raises(ValueError, match=message):
        recorder.event(obj, **call)


def test_cluster_scoped_objects_get_their_events_in_default() -> None:
    broadcast = broadcaster(Recording())
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "u"}}
    broadcast.recorder("nodes").event(node, "Normal", "Seen", "seen")
    assert broadcast._buffer[0].namespace == "default"
    assert "namespace" not in broadcast._buffer[0].body["regarding"]
