"""The deduplicating queue: a FIFO of distinct items plus the `dirty` and `processing` books."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypedDict, TypeVar

from olm_runtime import clock as _clock
from olm_runtime.workqueue import _metrics

T = TypeVar("T", bound=Hashable)


class QueueOptions(TypedDict, total=False):
    """The keyword options of `Queue`, which its subclasses pass on unchanged."""

    name: str | None
    clock: _clock.Clock
    metrics: _metrics.WorkqueueMetrics


class ShutDown(Exception):
    """Raised by `get` once the queue is shutting down: the worker holding no item should return."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Statistics:
    """A snapshot of a queue, cheap to take; the metrics collector reads it at scrape time."""

    depth: int
    """Items waiting to be handed out: the ready ones plus those re-added while in flight."""
    ready: int
    """Items `get` can hand out right now (`len(queue)`)."""
    in_flight: int
    """Items handed out by `get` and not yet `done`."""
    waiting: int
    """Items added with a delay that has not passed yet."""
    adds: int
    """Adds that marked an item for processing since the queue was made (merged duplicates excluded)."""
    retries: int
    """Delayed adds (`add_after`, `add_rate_limited`) since the queue was made."""
    unfinished_work_seconds: float
    """Summed age of the items in flight."""
    longest_running_processor_seconds: float
    """Age of the oldest item in flight, 0 when none is."""
    shutting_down: bool
    """Whether `shut_down` or `shut_down_with_drain` has been called."""


class Queue(Generic[T]):
    """A deduplicating work queue for asyncio workers; see the package docstring for its promises.

    Keyword-only options:

    - `name`: reports the `workqueue_*` metrics under this name (both the `name` and `controller`
      labels); without a name the queue records no metrics.
    - `clock`: where time comes from; tests pass a `clock.FakeClock`.
    - `metrics`: where a named queue reports; the runtime registry's `WorkqueueMetrics` unless given
      another.

    A queue belongs to one event loop and its thread; only `statistics` may be called from another
    thread (the metrics server's).
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        clock: _clock.Clock = _clock.REAL,
        metrics: _metrics.WorkqueueMetrics = _metrics.WORKQUEUE,
    ) -> None:
        self._name = name
        self._clock = clock
        self._now = clock.now
        # Every item in _queue is also in _dirty and never in _processing; each appears once.
        self._queue: deque[T] = deque()
        self._dirty: dict[T, float] = {}  # item -> when it was marked for processing
        self._processing: dict[T, float] = {}  # item -> when get handed it out
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drainers: list[asyncio.Future[None]] = []
        self._shutting_down = False
        self._adds = 0
        self._retries = 0
        recorder = metrics.register(name, self) if name else None
        self._observe_queue_duration = recorder.queue_duration if recorder else None
        self._observe_work_duration = recorder.work_duration if recorder else None

    @property
    def name(self) -> str | None:
        """The metrics name, or None when the queue records no metrics."""
        return self._name

    @property
    def clock(self) -> _clock.Clock:
        """The clock the queue reads time from."""
        return self._clock

    @property
    def shutting_down(self) -> bool:
        """True once `shut_down` or `shut_down_with_drain` has been called."""
        return self._shutting_down

    def __len__(self) -> int:
        """Items `get` can hand out right now; for information, never for coordination."""
        return len(self._queue)

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} name={self._name!r} ready={len(self._queue)} "
            f"in_flight={len(self._processing)} shutting_down={self._shutting_down}>"
        )

    def add(self, item: T) -> None:
        """Mark `item` for processing; ignored while shutting down or if it is already marked.

        An item in flight is only marked: it is queued again when its worker calls `done`.
        """
        if self._shutting_down or item in self._dirty:
            return
        self._dirty[item] = self._now()
        self._adds += 1
        if item in self._processing:
            return
        self._queue.append(item)
        if self._getters:
            self._wake_one_getter()

    async def get(self) -> T:
        """Wait for an item and hand it out; the caller owes the queue a `done(item)`.

        Raises `ShutDown` once the queue is shutting down, even if items are still queued.
        """
        while not self._queue or self._shutting_down:
            if self._shutting_down:
                raise ShutDown
            await self._wait_for_item()
        item = self._queue.popleft()
        now = self._now()
        self._processing[item] = now
        added = self._dirty.pop(item)
        if self._observe_queue_duration is not None:
            self._observe_queue_duration(now - added)
        return item

    def done(self, item: T) -> None:
        """Finish processing `item`; if it was added again meanwhile, it goes to the back of the queue.

        Raises `ValueError` for an item that is not in flight (never handed out, or already done).
        """
        try:
            started = self._processing.pop(item)
        except KeyError:
            raise ValueError(f"done() for an item that is not in flight: {item!r}") from None
        if self._observe_work_duration is not None:
            self._observe_work_duration(self._now() - started)
        if item in self._dirty:
            self._queue.append(item)
            if self._getters:
                self._wake_one_getter()
        if self._drainers and not self._processing:
            self._release_drainers()

    def shut_down(self) -> None:
        """Stop the queue now: adds are ignored, every `get` raises `ShutDown`, queued items stay unhanded.

        Also ends a `shut_down_with_drain` that is still waiting. Calling it again does nothing more.
        """
        self._begin_shut_down()
        self._release_drainers()

    async def shut_down_with_drain(self) -> None:
        """Shut down like `shut_down`, then wait until every item in flight is `done`.

        Workers must call `done`, or this waits until `shut_down` is called or the caller is cancelled.
        """
        self._begin_shut_down()
        if not self._processing:
            return
        drained = asyncio.get_running_loop().create_future()
        self._drainers.append(drained)
        try:
            await drained
        finally:
            with contextlib.suppress(ValueError):
                self._drainers.remove(drained)

    def statistics(self) -> Statistics:
        """A snapshot of depth, work in flight and counters; reads one consistent copy of the books."""
        now = self._clock.now()
        started = tuple(self._processing.values())
        return Statistics(
            depth=len(self._dirty),
            ready=len(self._queue),
            in_flight=len(started),
            waiting=self._waiting_count(),
            adds=self._adds,
            retries=self._retries,
            unfinished_work_seconds=sum(now - s for s in started),
            longest_running_processor_seconds=now - min(started) if started else 0.0,
            shutting_down=self._shutting_down,
        )

    def _begin_shut_down(self) -> None:
        self._shutting_down = True
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)

    def _waiting_count(self) -> int:
        return 0

    async def _wait_for_item(self) -> None:
        getter = asyncio.get_running_loop().create_future()
        self._getters.append(getter)
        try:
            await getter
        except BaseException:
            getter.cancel()  # does nothing if add() already woke it
            with contextlib.suppress(ValueError):
                self._getters.remove(getter)
            # A wake-up this getter can no longer use goes to the next one, or an item could sit idle.
            if not getter.cancelled() and self._queue:
                self._wake_one_getter()
            raise

    def _wake_one_getter(self) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return

    def _release_drainers(self) -> None:
        for drained in self._drainers:
            if not drained.done():
                drained.set_result(None)
        self._drainers.clear()
