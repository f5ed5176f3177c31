"""A scripted transport (the reflector's one seam), object builders, and a fake-time driver.

`FakeTransport` answers list requests from a queue of scripted pages or errors, and watch requests
from a queue of scripted `Watch`es (lines, then an ending) or errors. When a queue runs dry the call
blocks forever, so a reflector idles once its script is played out. Every request is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import orjson

from olm_runtime import cache, clock
from olm_runtime.client import errors
from olm_runtime.client.gvk import GroupVersionKind, GroupVersionResource, ResourceInfo

CONFIGMAPS = ResourceInfo(
    gvk=GroupVersionKind("", "v1", "ConfigMap"),
    gvr=GroupVersionResource("", "v1", "configmaps"),
    namespaced=True,
    verbs=frozenset({"list", "watch", "get"}),
)
NAMESPACES = ResourceInfo(
    gvk=GroupVersionKind("", "v1", "Namespace"),
    gvr=GroupVersionResource("", "v1", "namespaces"),
    namespaced=False,
)


def cm(
    name: str, rv: int | str, namespace: str = "default", labels: dict[str, str] | None = None, **data: str
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "resourceVersion": str(rv),
        "uid": f"uid-{namespace}-{name}",
        "managedFields": [{"manager": "test", "operation": "Apply"}],
    }
    if labels:
        metadata["labels"] = labels
    return {"metadata": metadata, "data": dict(data)}


def event(kind: str, obj: Mapping[str, Any]) -> bytes:
    full = {"apiVersion": "v1", "kind": "ConfigMap", **obj}
    return orjson.dumps({"type": kind, "object": full})


def bookmark(rv: int | str, *, initial_events_end: bool = False) -> bytes:
    metadata: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_events_end:
        metadata["annotations"] = {"k8s.io/initial-events-end": "true"}
    return orjson.dumps(
        {"type": "BOOKMARK", "object": {"kind": "ConfigMap", "apiVersion": "v1", "metadata": metadata}}
    )


def error_event(
    code: int, reason: str, message: str = "", causes: list[dict[str, str]] | None = None
) -> bytes:
    status: dict[str, Any] = {"kind": "Status", "status": "Failure", "code": code, "reason": reason}
    status["message"] = message
    if causes:
        status["details"] = {"causes": causes}
    return orjson.dumps({"type": "ERROR", "object": status})


def page(items: list[dict[str, Any]], rv: int | str, continue_token: str | None = None) -> bytes:
    metadata: dict[str, Any] = {"resourceVersion": str(rv)}
    if continue_token:
        metadata["continue"] = continue_token
    return orjson.dumps({"kind": "ConfigMapList", "apiVersion": "v1", "metadata": metadata, "items": items})


def gone(what: str = "list") -> errors.Gone:
    return errors.Gone(410, "Expired", f"The resourceVersion for the provided {what} is too old.")


def too_large() -> errors.ServerTimeout:
    return errors.ServerTimeout(
        504,
        "Timeout",
        "Too large resource version",
        details={"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]},
    )


def throttled(retry_after: float) -> errors.TooManyRequests:
    return errors.TooManyRequests(429, "TooManyRequests", "slow down", retry_after=retry_after)


@dataclass
class Watch:
    """A scripted watch: its lines, then how it ends.

    `end` is "close" (the server ends the stream), "stall" (nothing more ever arrives: only the
    watchdog can end it), "live" (lines come from `feed`, until `close()`), or an exception raised
    after the lines.
    """

    lines: list[bytes] = field(default_factory=list)
    end: str | BaseException = "close"
    opened: bool = False
    closed: bool = False
    _live: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)

    def feed(self, line: bytes) -> None:
        self._live.put_nowait(line)

    def close(self) -> None:
        self._live.put_nowait(None)

    async def _iterate(self) -> AsyncIterator[bytes]:
        for line in self.lines:
            yield line
        if self.end == "close":
            return
        if self.end == "stall":
            await asyncio.Event().wait()
        if self.end == "live":
            while True:
                live = await self._live.get()
                if live is None:
                    return
                yield live
        assert isinstance(self.end, BaseException)
        raise self.end


@dataclass
class Call:
    path: str
    params: dict[str, str]
    headers: dict[str, str]


class FakeTransport:
    """See the module docstring. `lists` and `watches` hold the script; `list_calls` and
    `watch_calls` what the reflector asked for."""

    def __init__(self) -> None:
        self.lists: deque[bytes | BaseException | Callable[[Call], bytes]] = deque()
        self.watches: deque[Watch | BaseException] = deque()
        self.list_calls: list[Call] = []
        self.watch_calls: list[Call] = []

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> bytes:
        assert method == "GET"
        call = Call(path, dict(params or {}), dict(headers or {}))
        self.list_calls.append(call)
        if not self.lists:
            await asyncio.Event().wait()
        answer = self.lists.popleft()
        if isinstance(answer, BaseException):
            raise answer
        if callable(answer):
            return answer(call)
        return answer

    def stream(
        self,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        return self._stream(Call(path, dict(params or {}), dict(headers or {})))

    @contextlib.asynccontextmanager
    async def _stream(self, call: Call) -> AsyncIterator[AsyncIterator[bytes]]:
        self.watch_calls.append(call)
        if not self.watches:
            await asyncio.Event().wait()
        script = self.watches.popleft()
        if isinstance(script, BaseException):
            raise script
        script.opened = True
        try:
            yield script._iterate()
        finally:
            script.closed = True


START = 1000.0
"""Where the tests' fake clocks start."""


async def run_until(fake: clock.FakeClock, condition: Callable[[], bool], *, jumps: int = 500) -> None:
    """Let tasks run; whenever they are all waiting, jump the clock to its next deadline, until
    `condition()` holds. Fails if nothing is scheduled and the condition is still false."""
    for _ in range(jumps):
        for _ in range(30):
            await asyncio.sleep(0)
        if condition():
            return
        deadline = fake.next_deadline()
        if deadline is None:
            raise AssertionError("stuck: every task waits and no timer is pending")
        fake.advance(max(0.0, deadline - fake.now()))
    raise AssertionError(f"condition still false after {jumps} clock jumps")


@contextlib.asynccontextmanager
async def running(coroutine_fn: Callable[[], Any]) -> AsyncIterator[asyncio.Task[Any]]:
    """Run a long-running coroutine (a reflector's `run`, an informer's `start`) for a test's body."""
    task = asyncio.ensure_future(coroutine_fn())
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


# Most scripts are a LIST page and then a watch, which is what paged mode asks for; the default,
# a streaming list, would ask for a watch first.
PAGED = cache.ReflectorOptions(list_mode=cache.ListMode.PAGED)


def new_informer(transport: FakeTransport, **kwargs: Any) -> tuple[cache.Informer, clock.FakeClock]:
    """An informer on ConfigMaps over `transport`, on a recording clock and with fixed jitter (rand
    0.5) so backoff delays are exact; paged lists unless `reflector_options` is given."""
    fake = clock.FakeClock(start=START)
    kwargs.setdefault("reflector_options", PAGED)
    return cache.Informer(transport, CONFIGMAPS, clock=fake, rand=lambda: 0.5, **kwargs), fake


class RecordingSink:
    """A reflector sink that records what it was told."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.replaced: list[tuple[list[dict[str, Any]], str]] = []

    async def replace(self, objects: list[dict[str, Any]], resource_version: str) -> None:
        self.replaced.append((objects, resource_version))
        self.calls.append(("replace", sorted(o["metadata"]["name"] for o in objects)))

    def added(self, obj: dict[str, Any]) -> None:
        self.calls.append(("added", obj["metadata"]["name"]))

    def modified(self, obj: dict[str, Any]) -> None:
        self.calls.append(("modified", obj["metadata"]["name"]))

    def deleted(self, obj: dict[str, Any]) -> None:
        self.calls.append(("deleted", obj["metadata"]["name"]))
