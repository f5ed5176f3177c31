"""What a controller's workqueue backoff is at a given moment, read from the controller's own log.

Both processes requeue a failed reconcile with client-go's default per-item backoff
(`olm_runtime.workqueue.default_controller_rate_limiter`): 5 ms doubled per failure since the
item last succeeded, capped at 1000 s. Counting the `reconcile failed` lines a process wrote for
one object (with `--log-format=json`) therefore gives the delay the queue scheduled after the
last failure: the longest a recovered dependency can wait before the next attempt starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from olm_runtime.testing.poll import eventually

BASE_DELAY = 0.005
MAX_DELAY = 1000.0
FAILED = ("reconcile failed", "reconcile timed out")
FAILURES = 8
"""Failures a drill waits for before ending its fault: the queue then waits 0.64 s."""
SOAK_FAILURES = 12
"""The same in soak runs: the queue then waits 10.24 s before the next attempt."""


@dataclass(frozen=True)
class LogMark:
    """A position in a process log: failures are counted from here on."""

    path: Path
    offset: int

    @classmethod
    def now(cls, path: Path) -> LogMark:
        return cls(path, path.stat().st_size if path.exists() else 0)

    def failures(self, controller: str, name: str) -> int:
        """`reconcile failed` lines for object `name` of `controller` written since the mark."""
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            lines = handle.read().splitlines()
        count = 0
        for line in lines:
            if not line.startswith(b"{"):
                continue
            try:
                entry = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if (
                entry.get("event") in FAILED
                and entry.get("controller") == controller
                and entry.get("object") == name
            ):
                count += 1
        return count


def delay_after(failures: int) -> float:
    """The delay the queue scheduled after the `failures`-th consecutive failure (0: none)."""
    if failures <= 0:
        return 0.0
    return min(BASE_DELAY * 2.0 ** (failures - 1), MAX_DELAY)


async def outlast(mark: LogMark, controller: str, name: str, failures: int) -> None:
    """Keep a fault until `controller` failed `failures` times on `name` since `mark`."""

    async def reached() -> bool:
        return mark.failures(controller, name) >= failures

    await eventually(reached, what=f"{failures} failed reconciles of {name}", timeout=60 + failures * 10.0)
