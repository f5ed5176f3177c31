"""Any sequence of add, add_after, clock advances, get, done and shut_down keeps the queue's books
in line with a plain model: FIFO of distinct items, one worker per item, re-adds after done."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from olm_runtime import clock, workqueue

ITEMS = st.sampled_from(["a", "b", "c", "d"])
DELAYS = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 1.5, 3.0])
STEPS = st.sampled_from([0.0, 0.5, 1.0, 2.0])


class QueueModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.clock = clock.FakeClock()
        self.queue = workqueue.DelayingQueue[str](clock=self.clock)
        self.now = 0.0
        self.ready: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.waiting: dict[str, tuple[float, int]] = {}
        self.sequence = itertools.count()
        self.shut = False

    def teardown(self) -> None:
        self.loop.close()

    def _model_add(self, item: str) -> None:
        if self.shut or item in self.dirty:
            return
        self.dirty.add(item)
        if item not in self.processing:
            self.ready.append(item)

    @rule(item=ITEMS)
    def add(self, item: str) -> None:
        self.queue.add(item)
        self._model_add(item)

    @rule(item=ITEMS, delay=DELAYS)
    def add_after(self, item: str, delay: float) -> None:
        self.queue.add_after(item, delay)
        if self.shut:
            return
        if delay <= 0:
            self._model_add(item)
            return
        deadline = self.now + delay
        known = self.waiting.get(item)
        if known is None or deadline < known[0]:
            self.waiting[item] = (deadline, next(self.sequence))

    @rule(step=STEPS)
    def advance(self, step: float) -> None:
        self.clock.advance(step)
        self.now += step
        due = sorted(
            (deadline, seq, item) for item, (deadline, seq) in self.waiting.items() if deadline <= self.now
        )
        for _, _, item in due:
            del self.waiting[item]
            self._model_add(item)

    @precondition(lambda self: self.ready or self.shut)
    @rule()
    def get(self) -> None:
        if self.shut:
            try:
                self.loop.run_until_complete(self.queue.get())
            except workqueue.ShutDown:
                return
            raise AssertionError("get() handed out an item after shut_down()")
        item = self.loop.run_until_complete(self.queue.get())
        expected = self.ready.pop(0)
        assert item == expected
        assert item not in self.processing
        self.dirty.remove(item)
        self.processing.add(item)

    @precondition(lambda self: self.processing)
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        item = data.draw(st.sampled_from(sorted(self.processing)))
        self.queue.done(item)
        self.processing.remove(item)
        if item in self.dirty:
            self.ready.append(item)

    @rule()
    def shut_down(self) -> None:
        self.queue.shut_down()
        self.shut = True
        self.waiting.clear()

    @invariant()
    def books_match_the_model(self) -> None:
        stats = self.queue.statistics()
        assert len(self.queue) == len(self.ready)
        assert (stats.depth, stats.in_flight, stats.waiting) == (
            len(self.dirty),
            len(self.processing),
            len(self.waiting),
        )
        assert len(set(self.ready)) == len(self.ready)
        assert not set(self.ready) & self.processing


QueueModel.TestCase.settings = settings(max_examples=200, stateful_step_count=60, deadline=None)
test_any_sequence_of_operations_keeps_the_queue_promises = QueueModel.TestCase
