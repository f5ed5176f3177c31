"""Delayed adds: a heap of deadlines and one clock timer for the earliest of them."""

from __future__ import annotations

import heapq
import itertools
from typing import Unpack

from olm_runtime import clock as _clock
from olm_runtime.workqueue import _queue
from olm_runtime.workqueue._queue import QueueOptions, T


class DelayingQueue(_queue.Queue[T]):
    """A `Queue` that can also add an item once a delay has passed (`add_after`).

    Waiting items sit in a heap ordered by deadline. The queue keeps a single timer on its clock, set
    for the earliest deadline; when it fires, every item that is due is added in deadline order (ties
    in the order of the `add_after` calls that set them) and the timer moves to the next deadline. No
    task runs in the background, so there is nothing to start and nothing left behind: `shut_down`
    cancels the timer and forgets the waiting items.
    """

    def __init__(self, **options: Unpack[QueueOptions]) -> None:
        super().__init__(**options)
        self._heap: list[tuple[float, int, T]] = []
        # item -> (deadline, sequence) of its one live heap entry; heap entries that disagree are stale.
        self._deadlines: dict[T, tuple[float, int]] = {}
        self._sequence = itertools.count()
        self._timer: _clock.Timer | None = None
        self._timer_deadline = 0.0

    def add_after(self, item: T, delay: float) -> None:
        """Add `item` once `delay` seconds have passed; at once if `delay <= 0`.

        An item already waiting keeps the earlier of its two deadlines. An item that is queued or in
        flight meanwhile is handled as any `add` is when its deadline comes. Ignored while shutting
        down. Each call counts as a retry in the metrics.
        """
        if self._shutting_down:
            return
        self._retries += 1
        if delay <= 0:
            self.add(item)
            return
        deadline = self._clock.now() + delay
        known = self._deadlines.get(item)
        if known is not None and known[0] <= deadline:
            return
        sequence = next(self._sequence)
        self._deadlines[item] = (deadline, sequence)
        heapq.heappush(self._heap, (deadline, sequence, item))
        if self._timer is None or deadline < self._timer_deadline:
            self._set_timer(deadline)

    def _on_timer(self) -> None:
        self._timer = None
        now = self._clock.now()
        heap = self._heap
        while heap and heap[0][0] <= now:
            deadline, sequence, item = heapq.heappop(heap)
            if self._deadlines.get(item) == (deadline, sequence):
                del self._deadlines[item]
                self.add(item)
        self._drop_stale_head()
        if heap:
            self._set_timer(heap[0][0])

    def _drop_stale_head(self) -> None:
        heap = self._heap
        while heap and self._deadlines.get(heap[0][2]) != heap[0][:2]:
            heapq.heappop(heap)

    def _set_timer(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._clock.call_at(deadline, self._on_timer)
        self._timer_deadline = deadline

    def _begin_shut_down(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap.clear()
        self._deadlines.clear()
        super()._begin_shut_down()

    def _waiting_count(self) -> int:
        return len(self._deadlines)
