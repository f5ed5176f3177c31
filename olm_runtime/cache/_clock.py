"""The seam for time: reflectors and informers read the clock, sleep and arm timers only through it.

It is the runtime's one clock, `olm_runtime.workqueue.clock`, under the names the cache has always
exported; its `FakeClock` drives a reflector in tests (backoffs, the watchdog, resyncs) without
real waiting.
"""

from __future__ import annotations

from olm_runtime.workqueue import clock

__all__ = ["SYSTEM_CLOCK", "Clock", "SystemClock", "Timer", "sleep"]

Clock = clock.Clock
Timer = clock.Timer
SystemClock = clock.RealClock
SYSTEM_CLOCK: Clock = clock.REAL


async def sleep(on: Clock, seconds: float) -> None:
    """Sleep `seconds` on `on`."""
    await on.sleep_until(on.now() + seconds)
