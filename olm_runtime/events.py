"""Kubernetes Events (`events.k8s.io/v1`) from controllers, aggregated and written off the hot path.

    recorder = manager.event_recorder("widget-controller")
    recorder.event(widget, "Warning", "InvalidSpec", "spec.size must be at least 1")

`EventRecorder.event` never waits and never raises for API trouble: it puts the occurrence in a
bounded buffer and returns. `EventBroadcaster.start()` (a runnable the manager runs on every replica)
writes them:

- the first occurrence of an event creates an Event object regarding the object;
- repeats, meaning the same object, type, reason, action and message from the same recorder, arriving
  within `aggregation_window` seconds of the previous one, do not create new objects: they raise
  the existing Event's `series.count` (the total number of occurrences) and `lastObservedTime`,
  written at most once per `series_update_interval` per Event;
- on shutdown, what is buffered and every pending series update is written, within
  `shutdown_flush_timeout`.

Failures are logged and dropped, never retried: an Event that fails to be written is lost, a full
buffer drops the newest occurrence (and counts it in `dropped`). A series whose Event has expired from
the server (Events live an hour by default) starts a new Event. The recorder raises only for calls
that are wrong in themselves (an object without kind or name, a type other than Normal or Warning).

Not promised: delivery, ordering between Events, or that `kubectl get events` shows a series count
before its next update is written.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime
import socket
import time
from collections.abc import Mapping
from typing import Any, Final, Literal

from olm_runtime import logging
from olm_runtime.client import Client, PatchType, errors, kinds

__all__ = ["NORMAL", "WARNING", "BroadcasterOptions", "EventBroadcaster", "EventRecorder", "EventType"]

_log = logging.get_logger("olm_runtime.events")

EventType = Literal["Normal", "Warning"]
NORMAL: Final = "Normal"
WARNING: Final = "Warning"

_MICRO_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"
_MAX_NOTE_BYTES = 1024
_MAX_FIELD = 128
_MAX_NAME = 253
_EXPECTED = (errors.APIError, errors.TransportError, TimeoutError, OSError)


def _micro_time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime(_MICRO_TIME)


def _truncate_utf8(text: str, limit: int) -> str:
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[: limit - 3].decode(errors="ignore") + "..."


def object_reference(obj: Mapping[str, Any]) -> dict[str, str]:
    """The `ObjectReference` of an object (apiVersion, kind, namespace, name, uid, resourceVersion)."""
    metadata = obj.get("metadata") or {}
    reference = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "namespace": metadata.get("namespace"),
        "name": metadata.get("name"),
        "uid": metadata.get("uid"),
        "resourceVersion": metadata.get("resourceVersion"),
    }
    if not reference["kind"] or not reference["apiVersion"] or not reference["name"]:
        raise ValueError("an Event needs an object with apiVersion, kind and metadata.name")
    return {key: str(value) for key, value in reference.items() if value}


@dataclasses.dataclass(frozen=True, kw_only=True)
class BroadcasterOptions:
    """How events are buffered, aggregated and written."""

    buffer_size: int = 1000
    """Occurrences waiting to be written; beyond this new ones are dropped."""
    aggregation_window: float = 600.0
    """A repeat more than this many seconds after the previous occurrence starts a new Event."""
    series_update_interval: float = 5.0
    """Seconds between writes of one Event's series while repeats keep coming."""
    shutdown_flush_timeout: float = 5.0
    """Seconds spent writing what is left when the broadcaster is cancelled."""
    request_timeout: float = 10.0
    """Bound on each API call."""
    max_series: int = 4096
    """Series remembered for aggregation; the least recently seen is forgotten first, and every
    series once no repeat can join it (`aggregation_window` after it was last seen)."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Occurrence:
    key: tuple[Any, ...]
    namespace: str
    body: dict[str, Any]
    seen: datetime.datetime


@dataclasses.dataclass(slots=True)
class _Series:
    namespace: str
    name: str
    count: int
    last_observed: datetime.datetime
    last_seen: float
    due: float | None = None


class EventRecorder:
    """Records Events as one component (`reportingController`). Get one from
    `Manager.event_recorder(component)` or `EventBroadcaster.recorder(component)`."""

    def __init__(self, broadcaster: EventBroadcaster, component: str) -> None:
        if not component or len(component) > _MAX_FIELD:
            raise ValueError("an event recorder needs a component name of 1 to 128 characters")
        self._broadcaster = broadcaster
        self.component = component

    def event(
        self,
        obj: Mapping[str, Any],
        type: EventType,
        reason: str,
        message: str,
        *,
        action: str | None = None,
        related: Mapping[str, Any] | None = None,
    ) -> None:
        """Record that `reason` happened to `obj` (a Kubernetes object as a dict); returns at once.

        `reason` is a short CamelCase cause (`InvalidSpec`), `message` the human-readable detail
        (truncated to 1 KiB), `action` what the component did or failed to do (defaults to `reason`),
        `related` a second object involved. Must be called on the event loop's thread.
        """
        if type not in (NORMAL, WARNING):
            raise ValueError(f"event type must be {NORMAL!r} or {WARNING!r}, not {type!r}")
        if not reason:
            raise ValueError("an event needs a reason")
        regarding = object_reference(obj)
        related_reference = object_reference(related) if related is not None else None
        action = (action or reason)[:_MAX_FIELD]
        reason = reason[:_MAX_FIELD]
        note = _truncate_utf8(message, _MAX_NOTE_BYTES)
        instance = self._broadcaster.instance
        stable = {k: v for k, v in regarding.items() if k != "resourceVersion"}
        related_key = tuple(sorted(related_reference.items())) if related_reference else ()
        key = (
            self.component,
            instance,
            tuple(sorted(stable.items())),
            related_key,
            type,
            reason,
            action,
            note,
        )
        namespace = regarding.get("namespace") or "default"
        body: dict[str, Any] = {
            "apiVersion": kinds.EVENTS_EVENT.api_version,
            "kind": kinds.EVENTS_EVENT.kind,
            "metadata": {"namespace": namespace},
            "reportingController": self.component,
            "reportingInstance": instance,
            "action": action,
            "reason": reason,
            "regarding": regarding,
            "note": note,
            "type": type,
        }
        if related_reference is not None:
            body["related"] = related_reference
        self._broadcaster._submit(_Occurrence(key, namespace, body, datetime.datetime.now(datetime.UTC)))


class EventBroadcaster:
    """Buffers the occurrences of every recorder made from it and writes them as Events; a runnable
    that runs on every replica (`needs_leader_election = False`)."""

    needs_leader_election = False
    name = "event-broadcaster"

    def __init__(
        self, client: Client, *, options: BroadcasterOptions | None = None, instance: str | None = None
    ) -> None:
        self._client = client
        self.options = options if options is not None else BroadcasterOptions()
        self.instance = (instance or socket.gethostname())[:_MAX_FIELD]
        """`reportingInstance` of every Event: which replica wrote it (the host name by default)."""
        self._buffer: collections.deque[_Occurrence] = collections.deque()
        self._wakeup = asyncio.Event()
        self._series: collections.OrderedDict[tuple[Any, ...], _Series] = collections.OrderedDict()
        self.dropped = 0
        """Occurrences dropped because the buffer was full."""
        self.failed = 0
        """Writes that failed (and were dropped)."""

    def recorder(self, component: str) -> EventRecorder:
        """A recorder that reports as `component` (the Event's `reportingController`)."""
        return EventRecorder(self, component)

    def _submit(self, occurrence: _Occurrence) -> None:
        if len(self._buffer) >= self.options.buffer_size:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 100 == 0:
                _log.warning("event buffer full; dropping events", dropped=self.dropped)
            return
        self._buffer.append(occurrence)
        self._wakeup.set()

    async def start(self) -> None:
        """Write events until cancelled, then flush what is left (bounded by the shutdown timeout)."""
        try:
            while True:
                await self._wait_for_work()
                await self._drain()
                await self._write_due_series(time.monotonic())
                self._forget_ended_series(time.monotonic())
        except asyncio.CancelledError:
            await self._flush_on_shutdown()
            raise

    async def _flush_on_shutdown(self) -> None:
        try:
            async with asyncio.timeout(self.options.shutdown_flush_timeout):
                await self._drain()
                await self._write_due_series(float("inf"))
        except TimeoutError:
            _log.warning("events left unwritten at shutdown", buffered=len(self._buffer))

    async def _wait_for_work(self) -> None:
        if self._buffer:
            return
        dues = [series.due for series in self._series.values() if series.due is not None]
        oldest = next(iter(self._series.values()), None)
        if oldest is not None and oldest.due is None:  # when it ends (`_forget_ended_series`)
            dues.append(oldest.last_seen + self.options.aggregation_window)
        timeout = max(0.0, min(dues) - time.monotonic()) if dues else None
        self._wakeup.clear()
        try:
            async with asyncio.timeout(timeout):
                await self._wakeup.wait()
        except TimeoutError:
            pass

    async def _drain(self) -> None:
        while self._buffer:
            await self._record(self._buffer.popleft())

    async def _record(self, occurrence: _Occurrence) -> None:
        now = time.monotonic()
        series = self._series.get(occurrence.key)
        if series is not None and now - series.last_seen <= self.options.aggregation_window:
            series.count += 1
            series.last_observed = occurrence.seen
            series.last_seen = now
            if series.due is None:
                series.due = now + self.options.series_update_interval
            self._series.move_to_end(occurrence.key)
            return
        body = dict(occurrence.body)
        regarding_name = body["regarding"]["name"]
        body["metadata"] = {
            **body["metadata"],
            "name": f"{regarding_name[: _MAX_NAME - 17]}.{time.time_ns():x}",
        }
        body["eventTime"] = _micro_time(occurrence.seen)
        try:
            async with asyncio.timeout(self.options.request_timeout):
                created = await self._client.create(body)
        except _EXPECTED as e:
            self.failed += 1
            _log.warning("writing event failed; dropped", reason=body["reason"], error=str(e))
            return
        self._series[occurrence.key] = _Series(
            occurrence.namespace, created["metadata"]["name"], 1, occurrence.seen, now
        )
        self._series.move_to_end(occurrence.key)
        while len(self._series) > self.options.max_series:
            self._series.popitem(last=False)

    def _forget_ended_series(self, now: float) -> None:
        """Drop the series no repeat can join any more (last seen over `aggregation_window` ago,
        nothing left to write): a controller of thousands of objects would otherwise keep
        `max_series` of them at rest. Series are kept least recently seen first."""
        while self._series:
            oldest = next(iter(self._series.values()))
            if oldest.due is not None or now - oldest.last_seen <= self.options.aggregation_window:
                return
            self._series.popitem(last=False)

    async def _write_due_series(self, now: float) -> None:
        for key, series in list(self._series.items()):
            if series.due is None or series.due > now:
                continue
            series.due = None
            patch = {"series": {"count": series.count, "lastObservedTime": _micro_time(series.last_observed)}}
            try:
                async with asyncio.timeout(self.options.request_timeout):
                    await self._client.patch(
                        kinds.EVENTS_EVENT,
                        series.name,
                        patch,
                        namespace=series.namespace,
                        patch_type=PatchType.MERGE,
                    )
            except errors.NotFound:
                self._series.pop(key, None)  # expired on the server: the next repeat starts a new Event
            except _EXPECTED as e:
                self.failed += 1
                _log.warning("updating event series failed", event=series.name, error=str(e))
