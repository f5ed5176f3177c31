"""What the event recorder sends, checked against a recording stand-in for the two client calls it
makes (create and patch). Whether the API server accepts and aggregates them is e2e's job."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from olm_runtime import events
from olm_runtime.client import errors
from olm_runtime.testing.poll import eventually

WIDGET: dict[str, Any] = {
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


class FakeTime:
    """Stands in for the `time` module inside `olm_runtime.events`: monotonic time moves only when
    a test says so, so aggregation windows and series intervals are exact."""

    def __init__(self) -> None:
        self.now = 0.0
        self._names = 0

    def monotonic(self) -> float:
        return self.now

    def time_ns(self) -> int:
        self._names += 1  # Event names only need to be distinct
        return self._names


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(events, "time", fake)
    return fake


Start = Callable[[events.EventBroadcaster], asyncio.Task[None]]


@pytest.fixture
async def started() -> AsyncIterator[Start]:
    """Start a broadcaster in a task; every one started is cancelled after the test."""
    tasks: list[asyncio.Task[None]] = []

    def start(broadcast: events.EventBroadcaster) -> asyncio.Task[None]:
        tasks.append(asyncio.create_task(broadcast.start()))
        return tasks[-1]

    yield start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def recording(
    client: Recording, started: Start, **options: Any
) -> tuple[events.EventBroadcaster, events.EventRecorder]:
    """A broadcaster writing to `client`, started, and its recorder for the "widgets" component."""
    broadcast = broadcaster(client, **options)
    recorder = broadcast.recorder("widgets")
    started(broadcast)
    return broadcast, recorder


async def test_a_repeat_within_the_window_of_the_previous_occurrence_joins_its_series(
    fake_time: FakeTime, started: Start
) -> None:
    client = Recording()
    broadcast, recorder = recording(client, started, series_update_interval=0.0)
    # Each repeat is within 600 s of the one before it, though the last is 1500 s after the first.
    for moment in (0.0, 500.0, 1000.0, 1500.0):
        fake_time.now = moment
        recorder.event(WIDGET, "Normal", "Tick", "tick")
        await poll(lambda: not broadcast._buffer)
    await poll(lambda: client.patched and client.patched[-1][1]["series"]["count"] == 4)
    assert len(client.created) == 1


async def test_a_repeat_after_the_aggregation_window_starts_a_new_event(
    fake_time: FakeTime, started: Start
) -> None:
    client = Recording()
    _, recorder = recording(client, started, series_update_interval=0.0)
    recorder.event(WIDGET, "Normal", "Tick", "tick")
    await poll(lambda: len(client.created) == 1)
    fake_time.now = 600.001
    recorder.event(WIDGET, "Normal", "Tick", "tick")
    await poll(lambda: len(client.created) == 2)
    assert client.patched == []
    assert client.created[0]["metadata"]["name"] != client.created[1]["metadata"]["name"]


async def test_a_hot_loop_costs_one_create_and_a_series_write_per_update_interval(
    fake_time: FakeTime, started: Start
) -> None:
    client = Recording()
    broadcast, recorder = recording(client, started, series_update_interval=5.0)

    def burst(count: int) -> None:
        for _ in range(count):
            recorder.event(WIDGET, "Warning", "Overheated", "too hot")

    burst(1000)
    await poll(lambda: not broadcast._buffer)
    assert (len(client.created), client.patched) == (1, []), "nothing is due before the interval"
    fake_time.now = 5.0
    burst(1)
    await poll(lambda: len(client.patched) == 1)
    fake_time.now = 7.0  # the next write of this series is due 5 s after this repeat
    burst(1)
    await poll(lambda: not broadcast._buffer)
    fake_time.now = 12.0
    burst(1)
    await poll(lambda: len(client.patched) == 2)
    assert [patch["series"]["count"] for _, patch in client.patched] == [1001, 1003]
    assert len(client.created) == 1


class ExpiringEvents(Recording):
    """The server forgot the Event (its TTL passed): series updates answer 404."""

    def __init__(self) -> None:
        super().__init__()
        self.patch_attempts = 0

    async def patch(self, gvk: Any, name: str, patch: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.patch_attempts += 1
        raise errors.NotFound(404, "NotFound", f'events.events.k8s.io "{name}" not found')


async def test_a_series_whose_event_expired_on_the_server_starts_a_new_event(started: Start) -> None:
    client = ExpiringEvents()
    broadcast, recorder = recording(client, started)
    recorder.event(WIDGET, "Normal", "Tick", "tick")
    await poll(lambda: len(client.created) == 1)
    recorder.event(WIDGET, "Normal", "Tick", "tick")
    await poll(lambda: client.patch_attempts == 1)
    recorder.event(WIDGET, "Normal", "Tick", "tick")
    await poll(lambda: len(client.created) == 2)
    assert broadcast.failed == 0, "an expired Event is not a failure"


class FailingOnce(Recording):
    def __init__(self) -> None:
        super().__init__()
        self.attempts: list[str] = []

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.attempts.append(body["note"])
        if len(self.attempts) == 1:
            raise errors.ServiceUnavailable(503, "ServiceUnavailable", "etcd is busy")
        return await super().create(body)


async def test_a_failed_write_is_dropped_and_never_retried(started: Start) -> None:
    client = FailingOnce()
    broadcast, recorder = recording(client, started)
    recorder.event(WIDGET, "Normal", "First", "lost")
    await poll(lambda: broadcast.failed == 1)
    recorder.event(WIDGET, "Normal", "Second", "kept")
    await poll(lambda: client.created)
    assert client.attempts == ["lost", "kept"]
    assert [body["note"] for body in client.created] == ["kept"]


class Gated(Recording):
    """The first create hangs until cancelled, like a request to a stalled API server."""

    def __init__(self) -> None:
        super().__init__()
        self.hanging = asyncio.Event()

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        if not self.hanging.is_set():
            self.hanging.set()
            await asyncio.Event().wait()
        return await super().create(body)


async def test_shutdown_writes_the_occurrences_still_buffered() -> None:
    client = Gated()
    broadcast = broadcaster(client)
    recorder = broadcast.recorder("widgets")
    recorder.event(WIDGET, "Normal", "One", "first")
    task = asyncio.create_task(broadcast.start())
    await poll(client.hanging.is_set)
    recorder.event(WIDGET, "Normal", "Two", "second")
    recorder.event(WIDGET, "Normal", "Three", "third")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [body["note"] for body in client.created] == ["second", "third"]


class Stalled(Recording):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_the_shutdown_flush_is_bounded_by_its_timeout() -> None:
    client = Stalled()
    broadcast = broadcaster(client, shutdown_flush_timeout=0.2)
    recorder = broadcast.recorder("widgets")
    recorder.event(WIDGET, "Normal", "One", "first")
    task = asyncio.create_task(broadcast.start())
    await poll(lambda: client.calls == 1)
    recorder.event(WIDGET, "Normal", "Two", "second")
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=10)
    assert done, "the broadcaster kept flushing past its shutdown timeout"
    assert task.cancelled()
    assert client.calls == 2, "the flush tried the buffered occurrence"


async def test_only_the_most_recently_seen_series_are_remembered(started: Start) -> None:
    client = Recording()
    _, recorder = recording(client, started, max_series=2)
    for reason in ("A", "B", "C"):
        recorder.event(WIDGET, "Normal", reason, "m")
    await poll(lambda: len(client.created) == 3)
    recorder.event(WIDGET, "Normal", "A", "m")  # forgotten: a new Event
    recorder.event(WIDGET, "Normal", "C", "m")  # remembered: a repeat
    await poll(lambda: len(client.created) == 4 and client.patched)
    assert [body["reason"] for body in client.created] == ["A", "B", "C", "A"]
    (name, patch), *_ = client.patched
    assert name == client.created[2]["metadata"]["name"]
    assert patch["series"]["count"] == 2


async def test_a_series_no_repeat_can_join_is_forgotten_without_another_event(
    fake_time: FakeTime, started: Start
) -> None:
    client = Recording()
    broadcast, recorder = recording(client, started, series_update_interval=0.0)
    recorder.event(WIDGET, "Normal", "Old", "m")
    await poll(lambda: len(client.created) == 1)
    fake_time.now = 300.0
    recorder.event(WIDGET, "Normal", "Newer", "m")
    await poll(lambda: len(client.created) == 2)
    assert len(broadcast._series) == 2
    fake_time.now = 600.5  # "Old" ended; "Newer" may still be joined
    broadcast._wakeup.set()  # what the broadcaster's own timer does in real time
    await poll(lambda: len(broadcast._series) == 1)
    recorder.event(WIDGET, "Normal", "Newer", "m")
    await poll(lambda: client.patched and client.patched[-1][1]["series"]["count"] == 2)
    assert len(client.created) == 2


async def test_another_component_action_or_object_makes_another_event(started: Start) -> None:
    client = Recording()
    broadcast = broadcaster(client)
    other = {**WIDGET, "metadata": {**WIDGET["metadata"], "name": "w2", "uid": "u-2"}}
    broadcast.recorder("widgets").event(WIDGET, "Normal", "Scaled", "scaled")
    broadcast.recorder("sizer").event(WIDGET, "Normal", "Scaled", "scaled")
    broadcast.recorder("widgets").event(WIDGET, "Normal", "Scaled", "scaled", action="Shrinking")
    broadcast.recorder("widgets").event(other, "Normal", "Scaled", "scaled")
    started(broadcast)
    await poll(lambda: len(client.created) == 4)
    assert client.patched == []
    assert [(b["reportingController"], b["action"], b["regarding"]["name"]) for b in client.created] == [
        ("widgets", "Scaled", "w"),
        ("sizer", "Scaled", "w"),
        ("widgets", "Shrinking", "w"),
        ("widgets", "Scaled", "w2"),
    ]


def test_a_related_object_is_referenced_beside_the_regarding_one() -> None:
    broadcast = broadcaster(Recording())
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": "ns"}}
    broadcast.recorder("widgets").event(WIDGET, "Normal", "Mounted", "mounted", related=secret)
    body = broadcast._buffer[0].body
    assert body["related"] == {"apiVersion": "v1", "kind": "Secret", "namespace": "ns", "name": "creds"}
    assert body["regarding"]["name"] == "w"


def test_a_recorder_needs_a_component_name_of_1_to_128_characters() -> None:
    broadcast = broadcaster(Recording())
    for bad in ("", "c" * 129):
        with pytest.raises(ValueError, match="component"):
            broadcast.recorder(bad)
    assert broadcast.recorder("c" * 128).component == "c" * 128


def test_the_reporting_instance_is_the_host_name_by_default() -> None:
    broadcast = events.EventBroadcaster(Recording())  # type: ignore[arg-type]
    assert broadcast.instance == socket.gethostname()[:128]
