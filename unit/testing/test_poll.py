"""`eventually` polls a check until it holds, and fails with the caller's words after the deadline."""

from __future__ import annotations

import time

import pytest

from olm_runtime.testing.poll import eventually


async def test_eventually_returns_once_the_check_holds_and_stops_polling() -> None:
    calls = 0

    async def third_time_lucky() -> bool:
        nonlocal calls
        calls += 1
        return calls >= 3

    await eventually(third_time_lucky, what="the third call", timeout=5, interval=0.001)
    assert calls == 3


async def test_eventually_fails_with_what_it_waited_for_after_the_timeout() -> None:
    calls = 0

    async def never() -> bool:
        nonlocal calls
        calls += 1
        return False

    started = time.monotonic()
    with pytest.raises(AssertionError, match="timed out after 0s waiting for the impossible"):
        await eventually(never, what="the impossible", timeout=0.2, interval=0.01)
    assert time.monotonic() - started >= 0.2
    assert calls > 1, "it polled more than once before giving up"


async def test_a_check_that_raises_is_not_swallowed() -> None:
    async def broken() -> bool:
        raise RuntimeError("the check itself is wrong")

    with pytest.raises(RuntimeError, match="the check itself is wrong"):
        await eventually(broken, what="anything", timeout=5)
