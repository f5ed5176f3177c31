"""Time as the runtime sees it: the one seam that tests replace with `FakeClock`.

A `Clock` reads monotonic seconds, schedules callbacks at a deadline and sleeps until one. Workqueues
use it for delayed adds and their duration metrics, rate limiters for their refill, reflectors and
informers for backoffs, the watchdog and resyncs, leader election for its lease timing, token
providers for their renewal. `RealClock` (the shared instance is `REAL`) reads `time.monotonic()`
and schedules on the running asyncio loop. `FakeClock` only moves when a test calls `advance`, which
runs every callback that falls due, in deadline order, before it returns. Embedders can use it in
their own tests the same way.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["REAL", "Clock", "FakeClock", "RealClock", "Timer", "sleep"]


class Timer(Protocol):
    """A scheduled callback that has not run yet."""

    def cancel(self) -> None:
        """Stop the callback from running. Cancelling twice, or after it ran, does nothing."""


class Clock(Protocol):
    """Monotonic time plus callbacks and sleeps at a deadline on that same time line."""

    def now(self) -> float:
        """Seconds on a monotonic time line; only differences between readings mean anything."""

    def call_at(self, deadline: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` (on the event loop) once `now()` has reached `deadline`."""

    async def sleep_until(self, deadline: float) -> None:
        """Return once `now()` has reached `deadline`; a deadline in the past still yields once."""


class RealClock:
    """`time.monotonic()` and the running asyncio loop's timers."""

    now = staticmethod(time.monotonic)  # the C function itself: the queue reads it on every operation

    def call_at(self, deadline: float, callback: Callable[[], None]) -> Timer:
        loop = asyncio.get_running_loop()
        # Translate instead of assuming loop.time() is time.monotonic(): other loops may differ.
        return loop.call_later(max(0.0, deadline - time.monotonic()), callback)

    async def sleep_until(self, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))


REAL = RealClock()
"""The clock every runtime component uses unless given another."""


async def sleep(on: Clock, seconds: float) -> None:
    """Sleep `seconds` on `on`."""
    await on.sleep_until(on.now() + seconds)


@dataclasses.dataclass(eq=False)
class _FakeTimer:
    deadline: float
    callback: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that stands still until `advance` moves it; for deterministic tests.

    `advance(seconds)` walks time forward through each pending deadline in order (ties in the order
    they were scheduled), setting `now()` to that deadline before running its callback, so a callback
    sees the time it asked for. Callbacks may schedule further timers; those run too if they fall due
    within the same advance. Nothing here needs a running event loop except `sleep_until`.

    With `autojump`, `sleep_until` moves time to its deadline itself (as trio's MockClock with an
    autojump threshold of 0): a sleeper never waits for the test, and sleeps are instant. Either
    way `sleeps` records the length of every sleep asked, in order, so a test reads a retry
    schedule from it.
    """

    def __init__(self, start: float = 0.0, *, autojump: bool = False) -> None:
        self._now = start
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._sequence = itertools.count()
        self.autojump = autojump
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def call_at(self, deadline: float, callback: Callable[[], None]) -> Timer:
        timer = _FakeTimer(deadline, callback)
        heapq.heappush(self._timers, (deadline, next(self._sequence), timer))
        return timer

    async def sleep_until(self, deadline: float) -> None:
        self.sleeps.append(deadline - self._now)
        if self.autojump and deadline > self._now:
            self.advance(deadline - self._now)
        if deadline <= self._now:
            await asyncio.sleep(0)
            return
        woken = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(None)

        timer = self.call_at(deadline, wake)
        try:
            await woken
        finally:
            timer.cancel()

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds` (not negative), running callbacks that fall due on the way."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go back: advance({seconds})")
        target = self._now + seconds
        while self._timers and self._timers[0][0] <= target:
            deadline, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, deadline)
            timer.callback()
        self._now = target

    def next_deadline(self) -> float | None:
        """The earliest deadline still pending, or None; lets a test jump straight to it."""
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None
