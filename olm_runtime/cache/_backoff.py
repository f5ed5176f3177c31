"""Jittered exponential backoff that forgets past failures after a healthy stretch.

The reflector asks for a delay before every retry. Delays start at `initial` and double up to `cap`;
each is stretched by a random factor in [1, 1 + jitter), so many processes that lost the same API
server do not come back in lockstep. When no delay was asked for during `reset_after` seconds the
connection is considered healthy and the next delay starts from `initial` again. With the defaults
(0.8 s to 30 s, jitter 1.0, reset after 2 min) a client of a dead server settles at one attempt per
30-60 s.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from olm_runtime.clock import REAL, Clock

__all__ = ["Backoff"]


class Backoff:
    def __init__(
        self,
        *,
        initial: float = 0.8,
        cap: float = 30.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        reset_after: float = 120.0,
        clock: Clock = REAL,
        rand: Callable[[], float] = random.random,
    ) -> None:
        if initial <= 0 or cap < initial or factor < 1 or jitter < 0:
            raise ValueError("backoff needs 0 < initial <= cap, factor >= 1 and jitter >= 0")
        self._initial, self._cap, self._factor, self._jitter = initial, cap, factor, jitter
        self._reset_after = reset_after
        self._clock = clock
        self._rand = rand
        self._next = initial
        self._last: float | None = None

    def delay(self) -> float:
        """The next delay in seconds; the base grows with every call until a healthy stretch."""
        now = self._clock.now()
        if self._last is not None and now - self._last >= self._reset_after:
            self._next = self._initial
        self._last = now
        base = self._next
        self._next = min(base * self._factor, self._cap)
        return base * (1.0 + self._jitter * self._rand())

    def reset(self) -> None:
        """Start again from `initial` (the next delay is the shortest)."""
        self._next = self._initial
        self._last = None
