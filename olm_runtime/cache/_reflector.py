"""The reflector: keep a sink in step with one collection on the API server (list, then watch).

The state machine follows client-go's reflector:

- **Initial state.** A streaming list (a watch with `sendInitialEvents=true`, ended by the bookmark
  annotated `k8s.io/initial-events-end`) when `ListMode.STREAMING` is chosen and the server accepts
  it, otherwise a paged list (`limit=500`, `continue`). The sink gets the whole collection at once
  (`replace`). The first paged list asks for resourceVersion "0" (served from the API server's watch
  cache), the first streaming list for the newest state ("", a consistent read) unless
  `cached_first_list` says "0" too; later ones for the last resourceVersion seen, and after a 410
  Gone or "too large resource version" for "" (a consistent read). Paging is switched off for a
  specific resourceVersion so the watch cache can answer, unless an earlier list proved the cache
  is off.
- **Watch** from the list's resourceVersion with bookmarks, a random 5-10 minute server-side
  timeout, and an inactivity watchdog: no line (event or bookmark) for `inactivity_timeout` means
  the connection is presumed dead and the watch is reopened from the last resourceVersion. A
  watch the server closes normally is reopened the same way, without listing again.
- **Errors.** 410 Gone / Expired and too-large resourceVersion relist. 429 waits (the longer of
  Retry-After and the backoff) and rewatches without relisting; so do broken connections. Anything
  else backs off and relists. Backoff is jittered exponential (0.8 s to 30 s), reset after two
  healthy minutes. Nothing but cancellation ends `run()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import random
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import structlog

from olm_runtime.cache._backoff import Backoff
from olm_runtime.cache._objects import Transform, object_key
from olm_runtime.client import errors
from olm_runtime.client.gvk import ResourceInfo
from olm_runtime.client.options import METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT
from olm_runtime.clock import REAL, Clock, Timer, sleep

__all__ = [
    "INITIAL_EVENTS_END",
    "ListMode",
    "Reflector",
    "ReflectorOptions",
    "ReflectorSink",
    "ReflectorStatistics",
    "WatchTransport",
]

_log = structlog.get_logger("olm_runtime.cache")

INITIAL_EVENTS_END = "k8s.io/initial-events-end"
"""Annotation of the bookmark that ends the initial events of a streaming list."""

_LIST_TIMEOUT = 300.0  # one page, or a whole unpaged list served from the watch cache
_VERY_SHORT_WATCH = 1.0
_INITIAL_EVENTS_WARNING = 10.0
_YIELD_EVERY = 0.01  # give the event loop back at least this often while applying a burst of events


class ListMode(enum.Enum):
    """How a reflector fetches the initial state of its collection."""

    STREAMING = "streaming"
    """A streaming list (WatchList: one watch that starts with the current objects), which costs the
    API server far less memory than a LIST; falls back to `PAGED` when the server rejects it."""
    PAGED = "paged"
    """A LIST in pages of `page_size` objects, then a separate watch."""


@dataclass(frozen=True, kw_only=True)
class ReflectorOptions:
    """How a reflector lists and watches. The defaults are client-go's."""

    list_mode: ListMode = ListMode.STREAMING
    """Streaming list with automatic fallback, or plain paged lists."""
    page_size: int = 500
    """Objects per page of a paged list."""
    cached_first_list: bool = False
    """Start the first streaming list from the API server's watch cache as it stands
    (resourceVersion "0", as the first paged list does) rather than from the newest state (no
    resourceVersion: a consistent read, as client-go's streaming list, which waits until the watch
    cache has caught up with etcd; up to about 100 ms on a quiet cluster). The watch goes on from
    that state, so what the cache lagged behind arrives as events: for informers whose readers
    treat an absent object as unknown, and many of which start at once."""
    min_watch_timeout: float = 300.0
    """Lower bound of the random server-side timeout (`timeoutSeconds`) of each watch."""
    max_watch_timeout: float = 600.0
    """Upper bound of that timeout; spreading reconnects evens the load on the API server."""
    inactivity_timeout: float = 90.0
    """Seconds without any line (event or bookmark) after which a watch is presumed dead and
    reopened. The API server sends a bookmark about every minute, so a healthy idle watch never
    trips it (without the watch cache, as with `--watch-cache=false`, it costs a reconnect)."""
    backoff_initial: float = 0.8
    """First delay before retrying after an error."""
    backoff_cap: float = 30.0
    """Largest base delay (a jittered delay is up to twice as long)."""
    backoff_jitter: float = 1.0
    """Each delay is multiplied by a random factor in [1, 1 + jitter)."""
    backoff_reset_after: float = 120.0
    """After this long without errors the next delay starts from `backoff_initial` again."""

    def __post_init__(self) -> None:
        if self.page_size < 1:
            raise ValueError("page_size must be at least 1")
        if not 0 < self.min_watch_timeout <= self.max_watch_timeout:
            raise ValueError("need 0 < min_watch_timeout <= max_watch_timeout")
        if self.inactivity_timeout <= 0:
            raise ValueError("inactivity_timeout must be positive")


class WatchTransport(Protocol):
    """The part of `olm_runtime.client.transport.Transport` a reflector uses: the seam for tests."""

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> bytes: ...

    def stream(
        self,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> AbstractAsyncContextManager[AsyncIterator[bytes]]: ...


class ReflectorSink(Protocol):
    """Where a reflector delivers what it learns (an informer). Objects are already transformed."""

    async def replace(self, objects: list[dict[str, Any]], resource_version: str) -> None:
        """The whole collection as of `resource_version` (after every list)."""
        ...

    def added(self, obj: dict[str, Any]) -> None: ...

    def modified(self, obj: dict[str, Any]) -> None: ...

    def deleted(self, obj: dict[str, Any]) -> None: ...


@dataclass(frozen=True, kw_only=True)
class ReflectorStatistics:
    """A snapshot of one reflector's health, for metrics and readiness checks."""

    name: str
    synced: bool
    """The first list (or streaming list) has been delivered."""
    resource_version: str
    """The last resourceVersion the reflector has caught up with."""
    watch_age: float | None
    """Seconds since the current watch was opened; `None` while no watch is open."""
    last_event_age: float | None
    """Seconds since the reflector last heard from the server: an event or bookmark, a completed
    list, or a watch being opened; `None` before any of these. A value well past
    `inactivity_timeout` means the reflector has not managed to watch for that long (see
    `last_error`)."""
    lists: int
    """Paged lists completed (the first sync and every relist)."""
    pages: int
    """Pages those lists took (a list the watch cache answers at once is one page)."""
    streaming_lists: int
    """Streaming lists completed."""
    watches: int
    """Watches opened."""
    watchdog_reconnects: int
    """Watches abandoned by the inactivity watchdog."""
    expired: int
    """410 Gone / Expired (or too-large resourceVersion) answers, each followed by a relist."""
    throttled: int
    """429 Too Many Requests answers."""
    errors: int
    """Failures that cost a backoff (connection problems, server errors, throttling)."""
    last_error: str | None
    """The most recent failure, for humans."""
    streaming: bool
    """Whether streaming lists are in use (false after the server rejected one, or when off)."""


class _Ended(enum.Enum):
    CLOSED = "closed"
    """The server ended the watch (its timeout); reopen from the last resourceVersion."""
    STALLED = "stalled"
    """The inactivity watchdog fired."""
    INITIAL_EVENTS_END = "initial-events-end"


class _Stream:
    """An open watch: its lines, and how to close it."""

    __slots__ = ("context", "events", "lines", "opened")

    def __init__(
        self,
        lines: AsyncIterator[bytes],
        context: AbstractAsyncContextManager[AsyncIterator[bytes]],
        opened: float,
    ) -> None:
        self.lines = lines
        self.context = context
        """The transport's stream, entered: exiting it closes the response."""
        self.opened = opened
        self.events = 0

    async def close(self) -> None:
        await self.context.__aexit__(None, None, None)


class StreamingListIncomplete(Exception):
    """A streaming list ended before its initial-events-end bookmark (the server may not honour
    `sendInitialEvents`); the reflector falls back to a paged list."""


class VeryShortWatch(Exception):
    """The server closed a watch within a second, before sending anything: treated as an error."""


def _relist_worthy(error: BaseException) -> bool:
    return isinstance(error, errors.Gone) or errors.is_resource_version_too_large(error)


def _rejects_streaming(error: BaseException) -> bool:
    """The server does not support streaming lists (e.g. WatchList disabled: 422 on sendInitialEvents)."""
    return isinstance(error, errors.Invalid | errors.BadRequest)


class Reflector:
    """Lists and watches one collection into a sink until cancelled. See the module docstring."""

    # A controller watching as thousands of identities holds thousands of reflectors.
    __slots__ = (
        "_api_version",
        "_backoff",
        "_base_params",
        "_clock",
        "_errors",
        "_expired",
        "_kind",
        "_last_error",
        "_last_event",
        "_last_rv",
        "_lists",
        "_metadata_only",
        "_options",
        "_pages",
        "_paginated_result",
        "_path",
        "_rand",
        "_rv_unavailable",
        "_sink",
        "_streaming",
        "_streaming_lists",
        "_synced",
        "_throttled",
        "_transform",
        "_transport",
        "_watch_opened",
        "_watchdog",
        "_watches",
        "name",
    )

    def __init__(
        self,
        transport: WatchTransport,
        resource: ResourceInfo,
        sink: ReflectorSink,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        metadata_only: bool = False,
        transform: Transform | None = None,
        options: ReflectorOptions | None = None,
        clock: Clock = REAL,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self._transport = transport
        self._sink = sink
        self._options = options or ReflectorOptions()
        self._clock = clock
        self._rand = rand
        self._transform = transform
        self._path = resource.path(namespace=namespace if resource.namespaced else None)
        self._base_params: dict[str, str] = {}
        if label_selector:
            self._base_params["labelSelector"] = label_selector
        if field_selector:
            self._base_params["fieldSelector"] = field_selector
        self._metadata_only = metadata_only
        if metadata_only:
            self._api_version, self._kind = "meta.k8s.io/v1", "PartialObjectMetadata"
        else:
            self._api_version, self._kind = resource.gvk.api_version, resource.gvk.kind
        self.name = describe(resource, [namespace], label_selector, field_selector, metadata_only)
        opts = self._options
        self._backoff = Backoff(
            initial=opts.backoff_initial,
            cap=opts.backoff_cap,
            jitter=opts.backoff_jitter,
            reset_after=opts.backoff_reset_after,
            clock=clock,
            rand=rand,
        )
        # client-go's state: the resourceVersion to resume from and whether it is known unusable.
        self._last_rv = ""
        self._rv_unavailable = False
        self._paginated_result = False
        self._streaming = opts.list_mode is ListMode.STREAMING
        self._synced = False
        # Health.
        self._watch_opened: float | None = None
        self._last_event: float | None = None
        self._lists = self._pages = self._streaming_lists = self._watches = self._watchdog = 0
        self._expired = self._throttled = self._errors = 0
        self._last_error: str | None = None

    @property
    def _log(self) -> Any:
        # Bound when something is logged, not kept (see `Informer._log`).
        return _log.bind(reflector=self.name)

    # Introspection ---------------------------------------------------------------------------

    @property
    def synced(self) -> bool:
        """Whether the first full state has been delivered to the sink."""
        return self._synced

    @property
    def resource_version(self) -> str:
        return self._last_rv

    def statistics(self) -> ReflectorStatistics:
        now = self._clock.now()
        return ReflectorStatistics(
            name=self.name,
            synced=self._synced,
            resource_version=self._last_rv,
            watch_age=None if self._watch_opened is None else now - self._watch_opened,
            last_event_age=None if self._last_event is None else now - self._last_event,
            lists=self._lists,
            pages=self._pages,
            streaming_lists=self._streaming_lists,
            watches=self._watches,
            watchdog_reconnects=self._watchdog,
            expired=self._expired,
            throttled=self._throttled,
            errors=self._errors,
            last_error=self._last_error,
            streaming=self._streaming,
        )

    # The outer loop --------------------------------------------------------------------------

    async def run(self) -> None:
        """List and watch until cancelled; every failure is logged, backed off and retried."""
        self._log.debug("reflector starting")
        while True:
            delay: float | None = None
            try:
                await self._list_and_watch()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a reflector must outlive every failure
                self._failed(error)
                self._log.warning(
                    "list and watch failed; retrying after a backoff",
                    error=str(error) or type(error).__name__,
                    error_type=type(error).__name__,
                )
                if isinstance(error, errors.TooManyRequests):
                    delay = self._throttle_delay(error)
            await sleep(self._clock, delay if delay is not None else self._backoff.delay())

    async def _list_and_watch(self) -> None:
        stream: _Stream | None = None
        if self._streaming:
            try:
                stream = await self._streaming_list()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # any failure: fall back to a paged list
                if _rejects_streaming(error):
                    self._streaming = False
                    self._log.info("server rejects streaming lists; using paged lists", error=str(error))
                else:
                    self._failed(error)
                    self._log.info("streaming list failed; falling back to a paged list", error=str(error))
        if stream is None:
            await self._paged_list()
        await self._watch(stream)

    def _failed(self, error: BaseException) -> None:
        self._errors += 1
        self._last_error = f"{type(error).__name__}: {error}"

    def _throttle_delay(self, error: errors.TooManyRequests) -> float:
        self._throttled += 1
        return max(error.retry_after or 0.0, self._backoff.delay())

    def _watch_timeout(self) -> int:
        low, high = self._options.min_watch_timeout, self._options.max_watch_timeout
        return int(low + self._rand() * (high - low))

    def _prepare(self, obj: dict[str, Any]) -> dict[str, Any]:
        if "kind" not in obj:  # items of a list carry no kind
            obj["kind"] = self._kind
            obj["apiVersion"] = self._api_version
        return obj if self._transform is None else self._transform(obj)

    # Lists -----------------------------------------------------------------------------------

    def _relist_resource_version(self) -> str:
        if self._rv_unavailable:
            return ""  # a consistent read of the newest state
        return self._last_rv or "0"  # "0": any state the watch cache holds, before the first sync

    async def _paged_list(self) -> None:
        rv = self._relist_resource_version()
        try:
            items, list_rv, paginated = await self._list_pages(rv)
        except errors.APIError as error:
            if not _relist_worthy(error):
                raise
            self._expired += 1
            self._rv_unavailable = True
            self._log.info("resourceVersion unavailable; listing the newest state", resource_version=rv)
            items, list_rv, paginated = await self._list_pages(self._relist_resource_version())
        if rv == "0" and paginated:
            self._paginated_result = True  # the watch cache is off: keep paging later lists
        self._rv_unavailable = False
        await self._sink.replace(items, list_rv)
        self._last_rv = list_rv
        self._last_event = self._clock.now()
        self._lists += 1
        self._synced = True
        self._log.debug("listed", objects=len(items), resource_version=list_rv, paginated=paginated)

    async def _list_pages(self, rv: str) -> tuple[list[dict[str, Any]], str, bool]:
        """Every item at `rv`, the list's resourceVersion, and whether it took more than one page."""
        limit = self._options.page_size
        if rv not in ("", "0") and not self._paginated_result:
            limit = 0  # let the watch cache answer in one go; it is at least as new as rv
        first: dict[str, str] = dict(self._base_params)
        if rv:
            first["resourceVersion"] = rv
        params = dict(first)
        if limit:
            params["limit"] = str(limit)
        headers = {"Accept": METADATA_LIST_ACCEPT} if self._metadata_only else None
        items: list[dict[str, Any]] = []
        pages = 0
        while True:
            try:
                body = await self._transport.request(
                    "GET", self._path, params=params, headers=headers, timeout=_LIST_TIMEOUT
                )
            except errors.Gone:
                if "continue" not in params:
                    raise
                # The continue token outlived etcd's history: fetch everything in one request.
                self._log.info("list continuation expired; listing without pages")
                params, items, pages = dict(first), [], 0
                continue
            document = orjson.loads(body)
            pages += 1
            self._pages += 1
            prepare = self._prepare
            items.extend(prepare(item) for item in document.get("items") or ())
            metadata = document.get("metadata") or {}
            token = metadata.get("continue")
            if not token:
                return items, str(metadata.get("resourceVersion") or ""), pages > 1
            params = {**self._base_params, "limit": str(limit or self._options.page_size), "continue": token}

    async def _streaming_list(self) -> _Stream:
        """Fill a temporary map from a streaming list, hand it to the sink, and return the stream
        (positioned after the initial-events-end bookmark) for the watch to continue on."""
        first = "0" if self._options.cached_first_list else ""
        while True:
            rv = "" if self._rv_unavailable else (self._last_rv or first)
            try:
                stream = await self._open(rv, initial_events=True)
            except (errors.TooManyRequests, errors.TransportError, TimeoutError) as error:
                await self._retry_delay(error)
                continue
            except errors.APIError as error:
                if not _relist_worthy(error):
                    raise
                self._expired += 1
                self._rv_unavailable = True
                continue
            collected: dict[str, dict[str, Any]] = {}
            try:
                ended, list_rv = await self._consume(stream, collect=collected, propagate=False)
            except (errors.TooManyRequests, errors.TransportError) as error:
                await self._close(stream)
                await self._retry_delay(error)
                continue
            except errors.APIError as error:
                await self._close(stream)
                if not _relist_worthy(error):
                    raise
                self._expired += 1
                self._rv_unavailable = True
                continue
            except BaseException:
                await self._close(stream)
                raise
            if ended is not _Ended.INITIAL_EVENTS_END:
                await self._close(stream)
                raise StreamingListIncomplete(f"stream {ended.value} before the initial-events-end bookmark")
            break
        self._rv_unavailable = False
        try:
            await self._sink.replace(list(collected.values()), list_rv)
        except BaseException:
            await self._close(stream)
            raise
        self._last_rv = list_rv
        self._last_event = self._clock.now()
        self._streaming_lists += 1
        self._synced = True
        self._log.debug("listed by streaming", objects=len(collected), resource_version=list_rv)
        return stream

    async def _retry_delay(self, error: Exception) -> None:
        self._failed(error)
        if isinstance(error, errors.TooManyRequests):
            delay = self._throttle_delay(error)
        else:
            delay = self._backoff.delay()
        self._log.info("watch unavailable; retrying", error=str(error), delay=round(delay, 3))
        await sleep(self._clock, delay)

    # Watches ---------------------------------------------------------------------------------

    async def _open(self, rv: str, *, initial_events: bool) -> _Stream:
        """Open a watch from `rv` (from now when empty). With `initial_events` it is a streaming list:
        the current state, no older than `rv`, comes first as ADDED events, ended by a bookmark."""
        params = {**self._base_params, "watch": "true"}
        if initial_events:
            params["sendInitialEvents"] = "true"
            params["resourceVersionMatch"] = "NotOlderThan"
        params["allowWatchBookmarks"] = "true"
        params["timeoutSeconds"] = str(self._watch_timeout())
        if rv:
            params["resourceVersion"] = rv
        if self._metadata_only:
            context = self._transport.stream(
                self._path, params=params, headers={"Accept": METADATA_WATCH_ACCEPT}
            )
        else:
            context = self._transport.stream(self._path, params=params)
        # Entered by hand rather than through an AsyncExitStack: one stack per open watch is
        # memory that thousands of watches add up.
        entered = False
        try:
            async with asyncio.timeout(self._options.inactivity_timeout):
                lines = await context.__aenter__()
                entered = True
        except BaseException:
            if entered:
                await context.__aexit__(None, None, None)
            raise
        now = self._clock.now()
        self._watches += 1
        self._watch_opened = self._last_event = now
        return _Stream(lines, context, now)

    async def _watch(self, stream: _Stream | None) -> None:
        """Watch from the last resourceVersion, reopening as needed; return to relist."""
        while True:
            propagate = True
            if stream is None:
                rv = self._last_rv
                # Watches from "" or "0" start with synthetic ADDED events in no particular order:
                # their resourceVersions are not progress until something else arrives.
                propagate = rv not in ("", "0")
                try:
                    stream = await self._open(rv, initial_events=False)
                except (errors.TooManyRequests, errors.TransportError, TimeoutError) as error:
                    await self._retry_delay(error)
                    continue
                except errors.APIError as error:
                    if _relist_worthy(error):
                        self._expired += 1
                        self._log.info("watch resourceVersion expired; relisting", error=str(error))
                        return
                    raise
            try:
                ended, _ = await self._consume(stream, collect=None, propagate=propagate)
            except (errors.TooManyRequests, errors.TransportError) as error:
                await self._close(stream)
                stream = None
                await self._retry_delay(error)
                continue
            except errors.APIError as error:
                await self._close(stream)
                if _relist_worthy(error):
                    self._expired += 1
                    self._log.info("watch expired; relisting", error=str(error))
                    return
                raise
            except BaseException:
                await self._close(stream)
                raise
            duration = self._clock.now() - stream.opened
            events = stream.events
            await self._close(stream)
            stream = None
            if ended is _Ended.STALLED:
                self._watchdog += 1
                self._log.warning(
                    "watch silent for too long; reconnecting",
                    inactivity_timeout=self._options.inactivity_timeout,
                    resource_version=self._last_rv,
                )
            elif duration < _VERY_SHORT_WATCH and events == 0:
                raise VeryShortWatch(f"the server closed the watch of {self.name} at once, sending nothing")

    def _handle(
        self, line: bytes, collect: dict[str, dict[str, Any]] | None, propagate: bool, past_initial: bool
    ) -> tuple[bool, str | None]:
        """Apply one watch event (`_consume`); whether events are past the initial ones now, and
        the resourceVersion of the initial-events-end bookmark when this is it and `collect` is
        given."""
        event = orjson.loads(line)
        kind = event.get("type")
        obj = event.get("object")
        if kind == "ERROR":
            raise errors.from_status(obj if isinstance(obj, dict) else {})
        if not isinstance(obj, dict):
            self._log.warning("watch event without an object", event_type=kind)
            return past_initial, None
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if kind == "BOOKMARK":
            past_initial = True
            annotations = obj["metadata"].get("annotations") or {}
            if collect is not None and annotations.get(INITIAL_EVENTS_END) == "true":
                return past_initial, rv
        elif kind in ("ADDED", "MODIFIED", "DELETED"):
            if kind != "ADDED":
                past_initial = True
            obj = self._prepare(obj)
            if collect is not None:
                if kind == "DELETED":
                    collect.pop(object_key(obj), None)
                else:
                    collect[object_key(obj)] = obj
            elif kind == "ADDED":
                self._sink.added(obj)
            elif kind == "MODIFIED":
                self._sink.modified(obj)
            else:
                self._sink.deleted(obj)
        else:
            self._log.warning("unknown watch event type", event_type=kind)
            return past_initial, None
        if collect is None and (propagate or past_initial) and rv:
            self._last_rv = rv
        return past_initial, None

    async def _close(self, stream: _Stream) -> None:
        self._watch_opened = None
        with contextlib.suppress(Exception):
            await stream.close()

    async def _consume(
        self, stream: _Stream, *, collect: dict[str, dict[str, Any]] | None, propagate: bool
    ) -> tuple[_Ended, str]:
        """Apply the stream's events until it ends, stalls or (when collecting the initial events
        of a streaming list into `collect`) the initial-events-end bookmark arrives.

        Returns how it ended and, when collecting, the resourceVersion of that bookmark.
        """
        loop = asyncio.get_running_loop()
        inactivity = self._options.inactivity_timeout
        clock = self._clock
        lines = stream.lines
        past_initial = False  # an event other than ADDED arrived: resourceVersions are in order now
        warner = _InitialEventsWarner(clock, self._log) if collect is not None else None
        last_yield = time.perf_counter()
        try:
            async with asyncio.timeout(None) as deadline:

                def expire() -> None:
                    deadline.reschedule(loop.time())

                while True:
                    watchdog = clock.call_at(clock.now() + inactivity, expire)
                    try:
                        line = await anext(lines)
                    except StopAsyncIteration:
                        return _Ended.CLOSED, ""
                    finally:
                        watchdog.cancel()
                    deadline.reschedule(None)
                    self._last_event = clock.now()
                    stream.events += 1
                    # Handled in a call of its own and the line dropped: this frame then holds
                    # nothing of the event while it waits for the next, which at rest takes
                    # minutes, and each of thousands of drift watches would keep its last object.
                    past_initial, initial_end = self._handle(line, collect, propagate, past_initial)
                    del line
                    if initial_end is not None:
                        return _Ended.INITIAL_EVENTS_END, initial_end
                    if time.perf_counter() - last_yield > _YIELD_EVERY:
                        await asyncio.sleep(0)
                        last_yield = time.perf_counter()
        except TimeoutError:
            return _Ended.STALLED, ""
        finally:
            if warner is not None:
                warner.cancel()


class _InitialEventsWarner:
    """Logs every 10 s while a streaming list has not yet sent its initial-events-end bookmark."""

    def __init__(self, clock: Clock, log: Any) -> None:
        self._clock, self._log = clock, log
        self._started = clock.now()
        self._timer: Timer = clock.call_at(self._started + _INITIAL_EVENTS_WARNING, self._warn)

    def _warn(self) -> None:
        self._log.warning(
            "still waiting for the initial-events-end bookmark of a streaming list",
            waited=round(self._clock.now() - self._started, 1),
        )
        self._timer = self._clock.call_at(self._clock.now() + _INITIAL_EVENTS_WARNING, self._warn)

    def cancel(self) -> None:
        self._timer.cancel()


def describe(
    resource: ResourceInfo,
    namespaces: Sequence[str | None],
    label_selector: str | None,
    field_selector: str | None,
    metadata_only: bool,
) -> str:
    """A human-readable name for a watch, used in logs and statistics. Interned: an informer of one
    scope and its reflector have the same name, and a controller may run thousands of them."""
    parts = [f"{resource.gvr.api_version}/{resource.gvr.resource}"]
    named = [n for n in namespaces if n]
    if named and resource.namespaced:
        parts.append(f"namespace={','.join(named)}")
    if label_selector:
        parts.append(f"labels={label_selector}")
    if field_selector:
        parts.append(f"fields={field_selector}")
    if metadata_only:
        parts.append("metadata-only")
    return sys.intern(" ".join(parts))
