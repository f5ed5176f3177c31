"""The seam for time: reflectors and informers read the clock, sleep and arm timers only through it.

The protocol has the same shape as `olm_runtime.workqueue.clock.Clock`, so that module's
`FakeClock` drives a reflector in tests (backoffs, the watchdog, resyncs) without real waiting.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock", "Timer", "sleep"]


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic time line."""
        ...

    def call_at(self, deadline: float, callback: Callable[[], None]) -> Timer:
        """Run `callback` on the event loop once `now()` reaches `deadline`."""
        ...

    async def sleep_until(self, deadline: float) -> None:
        """Return once `now()` reaches `deadline` (cancellable)."""
        ...


class SystemClock:
    """`time.monotonic()` and the running event loop's timers."""

    now = staticmethod(time.monotonic)

    def call_at(self, deadline: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(0.0, deadline - time.monotonic()), callback)

    async def sleep_until(self, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))


SYSTEM_CLOCK: Clock = SystemClock()


async def sleep(clock: Clock, seconds: float) -> None:
    """Sleep `seconds` on `clock`."""
    await clock.sleep_until(clock.now() + seconds)
