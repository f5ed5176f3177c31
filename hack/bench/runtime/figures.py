"""What every contender process measures and prints, so the figures mean the same for all of them."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from hack.bench.measure import own_rss

WRITTEN_AT = "bench/written-at"
"""Annotation the driver stamps on each update: the write's wall-clock time in nanoseconds."""


def emit(**values: Any) -> None:
    """One JSON object per line on stdout: what the driver reads."""
    print(json.dumps(values), flush=True)


class Latencies:
    """Delays from each update's write (its `bench/written-at` stamp) to its handling.

    Stamps older than this process come from earlier runs over the same objects and are ignored;
    of several updates to one object only the newest seen counts (as a level-based controller
    sees them). `done` is set once `expect` updates have been counted.
    """

    def __init__(self, expect: int) -> None:
        self.expect = expect
        self.done = asyncio.Event()
        self._started_ns = time.time_ns()
        self._seen: dict[str, int] = {}
        self._delays: list[float] = []
        self._first = 0.0

    def observe(self, key: str, annotations: Any) -> None:
        stamp = int((annotations or {}).get(WRITTEN_AT, "0"))
        if stamp <= max(self._seen.get(key, 0), self._started_ns):
            return
        self._seen[key] = stamp
        if not self._delays:
            self._first = time.monotonic()
        self._delays.append((time.time_ns() - stamp) / 1e9)
        if len(self._delays) == self.expect:
            self.done.set()

    def summary(self, *, handled: int) -> dict[str, Any]:
        """Figures once done: updates per second from the first to the last, p50/p99 delays."""
        elapsed = time.monotonic() - self._first
        delays = sorted(self._delays)
        return {
            "events": len(delays),
            "reconciles": handled,
            "seconds": elapsed,
            "per_second": len(delays) / elapsed,
            "p50": delays[len(delays) // 2],
            "p99": delays[int(0.99 * (len(delays) - 1))],
            "rss": own_rss(),
        }
