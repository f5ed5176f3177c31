"""The clocks: FakeClock runs due callbacks in deadline order; RealClock follows time.monotonic."""

from __future__ import annotations

import asyncio
import functools
import time

import pytest

from olm_runtime import clock


def test_fake_clock_stands_still_until_advanced() -> None:
    fake = clock.FakeClock(start=100.0)
    assert fake.now() == 100.0
    fake.advance(2.5)
    assert fake.now() == 102.5


def test_fake_clock_runs_callbacks_in_deadline_order_at_their_deadline() -> None:
    fake = clock.FakeClock()
    seen: list[tuple[str, float]] = []

    def record(name: str) -> None:
        seen.append((name, fake.now()))

    for name, deadline in [("c", 3.0), ("a", 1.0), ("b", 2.0), ("late", 9.0)]:
        fake.call_at(deadline, functools.partial(record, name))
    fake.advance(5.0)
    assert seen == [("a", 1.0), ("b", 2.0), ("c", 3.0)]
    assert fake.now() == 5.0
    assert fake.next_deadline() == 9.0


def test_fake_clock_runs_ties_in_the_order_they_were_scheduled() -> None:
    fake = clock.FakeClock()
    seen: list[str] = []
    for name in ["b", "a", "c"]:
        fake.call_at(1.0, functools.partial(seen.append, name))
    fake.advance(1.0)
    assert seen == ["b", "a", "c"]


def test_fake_clock_runs_callbacks_scheduled_by_callbacks_within_the_same_advance() -> None:
    fake = clock.FakeClock()
    seen: list[float] = []

    def tick() -> None:
        seen.append(fake.now())
        if len(seen) < 3:
            fake.call_at(fake.now() + 1.0, tick)

    fake.call_at(1.0, tick)
    fake.advance(10.0)
    assert seen == [1.0, 2.0, 3.0]


def test_fake_clock_skips_cancelled_callbacks() -> None:
    fake = clock.FakeClock()
    seen: list[str] = []
    fake.call_at(1.0, lambda: seen.append("cancelled")).cancel()
    fake.call_at(2.0, lambda: seen.append("kept"))
    assert fake.next_deadline() == 2.0
    fake.advance(3.0)
    assert seen == ["kept"]


def test_fake_clock_cannot_go_back() -> None:
    with pytest.raises(ValueError, match="cannot go back"):
        clock.FakeClock().advance(-1.0)


async def test_fake_clock_sleep_until_returns_when_advanced_to_the_deadline() -> None:
    fake = clock.FakeClock()
    sleeper = asyncio.create_task(fake.sleep_until(5.0))
    await asyncio.sleep(0)
    fake.advance(4.0)
    await asyncio.sleep(0)
    assert not sleeper.done()
    fake.advance(1.0)
    await sleeper
    await fake.sleep_until(1.0)  # a deadline in the past returns at once


async def test_real_clock_follows_time_monotonic() -> None:
    before = time.monotonic()
    now = clock.REAL.now()
    assert before <= now <= time.monotonic()


async def test_real_clock_runs_a_callback_after_its_deadline() -> None:
    fired = asyncio.Event()
    deadline = clock.REAL.now() + 0.01
    clock.REAL.call_at(deadline, fired.set)
    await asyncio.wait_for(fired.wait(), timeout=5)
    assert clock.REAL.now() >= deadline


async def test_real_clock_sleep_until_returns_after_its_deadline() -> None:
    deadline = clock.REAL.now() + 0.01
    await clock.REAL.sleep_until(deadline)
    assert clock.REAL.now() >= deadline


def test_clock_exports_exactly_these_names() -> None:
    assert sorted(clock.__all__) == ["Clock", "FakeClock", "REAL", "RealClock", "Timer", "sleep"]


async def test_an_autojumping_clock_makes_sleeps_instant_and_records_them() -> None:
    fake = clock.FakeClock(start=10.0, autojump=True)
    await clock.sleep(fake, 2.5)
    await fake.sleep_until(20.0)
    await clock.sleep(fake, 0)
    assert fake.now() == 20.0
    assert fake.sleeps == [2.5, 7.5, 0.0]


async def test_without_autojump_a_sleeper_waits_for_the_test_and_is_recorded() -> None:
    fake = clock.FakeClock(start=10.0)
    sleeper = asyncio.create_task(clock.sleep(fake, 5))
    await asyncio.sleep(0)
    assert not sleeper.done()
    assert fake.sleeps == [5]
    fake.advance(5)
    await sleeper
    assert fake.now() == 15.0
