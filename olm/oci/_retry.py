"""Bounded retries with jittered exponential backoff for transient registry trouble."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""Answers worth asking again: timeouts, throttling and server-side failures."""


@dataclass(frozen=True, kw_only=True)
class RetryPolicy:
    """How often and how patiently to retry one request."""

    attempts: int = 4
    """Tries in total (the first one included); 1 disables retries."""
    initial_delay: float = 0.5
    """Delay before the second try, in seconds; doubles each time."""
    max_delay: float = 10.0
    """Cap on a single delay, in seconds."""
    jitter: float = 0.5
    """Each delay is multiplied by a random factor in [1 - jitter, 1 + jitter]."""
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)
    """How to wait (injected by tests to run without waiting)."""
    random: Callable[[], float] = field(default=random.random, repr=False)

    def delay(self, retry: int) -> float:
        """The pause before retry number `retry` (1 for the second try)."""
        base = min(self.max_delay, self.initial_delay * (2 ** (retry - 1)))
        return float(base * (1 - self.jitter + 2 * self.jitter * self.random()))
