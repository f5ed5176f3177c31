"""Backoff: 0.8 s doubling to a 30 s cap, jitter within [base, 2 * base), reset after 2 healthy minutes."""

from __future__ import annotations

import random

import pytest

from olm_runtime import clock
from olm_runtime.cache._backoff import Backoff


def test_the_base_delay_doubles_up_to_the_cap() -> None:
    backoff = Backoff(jitter=0.0, clock=clock.FakeClock())
    assert [backoff.delay() for _ in range(9)] == pytest.approx([0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30])


def test_jitter_stretches_each_delay_within_base_to_twice_base() -> None:
    rng = random.Random(7)
    fake = clock.FakeClock()
    samples: list[list[float]] = [[] for _ in range(8)]
    for _ in range(300):
        backoff = Backoff(clock=fake, rand=rng.random)
        for step in range(8):
            samples[step].append(backoff.delay())
    bases = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    for base, delays in zip(bases, samples, strict=True):
        assert all(base <= d < 2 * base for d in delays)
        assert max(delays) - min(delays) > 0.5 * base  # really spread out, not a constant


def test_a_healthy_stretch_resets_the_delay_but_shorter_pauses_do_not() -> None:
    fake = clock.FakeClock()
    backoff = Backoff(jitter=0.0, clock=fake)
    for _ in range(6):
        backoff.delay()
    fake.advance(60)  # a minute between two failures: still the same outage
    assert backoff.delay() == pytest.approx(30.0)
    fake.advance(120)  # two quiet minutes: the server is considered healthy again
    assert backoff.delay() == pytest.approx(0.8)
    assert backoff.delay() == pytest.approx(1.6)


def test_reset_starts_over() -> None:
    backoff = Backoff(jitter=0.0, clock=clock.FakeClock())
    backoff.delay()
    backoff.delay()
    backoff.reset()
    assert backoff.delay() == pytest.approx(0.8)


def test_nonsense_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="initial"):
        Backoff(initial=5, cap=1)
