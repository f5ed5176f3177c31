"""Waiting for a condition in tests: poll with a deadline, never sleep a fixed time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


async def eventually(
    check: Callable[[], Awaitable[bool]], *, what: str, timeout: float = 60.0, interval: float = 0.2
) -> None:
    """Await `check` until it returns True; fail with `what` in the message after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(interval)
