"""RateLimitingQueue: retries wait as long as the limiter says; forget and num_requeues reach it."""

from __future__ import annotations

import pytest

from olm_runtime import clock, workqueue


async def test_add_rate_limited_adds_after_the_limiter_delay() -> None:
    fake = clock.FakeClock()
    queue = workqueue.RateLimitingQueue[str](clock=fake)
    for expected_delay in [0.005, 0.01, 0.02]:
        queue.add_rate_limited("a")
        fake.advance(expected_delay - 0.001)
        assert len(queue) == 0
        fake.advance(0.001)
        assert len(queue) == 1
        queue.done(await queue.get())
    assert queue.num_requeues("a") == 3
    assert queue.statistics().retries == 3


async def test_forget_resets_the_backoff_of_an_item() -> None:
    fake = clock.FakeClock()
    queue = workqueue.RateLimitingQueue[str](clock=fake)
    for _ in range(5):
        queue.add_rate_limited("a")
    queue.forget("a")
    assert queue.num_requeues("a") == 0
    queue.add_rate_limited("b")
    assert fake.next_deadline() == pytest.approx(0.005)


async def test_add_rate_limited_is_ignored_while_shutting_down_without_asking_the_limiter() -> None:
    queue = workqueue.RateLimitingQueue[str](clock=clock.FakeClock())
    queue.shut_down()
    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 0


async def test_a_given_rate_limiter_is_used() -> None:
    fake = clock.FakeClock()
    limiter = workqueue.ItemExponentialFailureRateLimiter[str](base_delay=2.0, max_delay=2.0)
    queue = workqueue.RateLimitingQueue[str](rate_limiter=limiter, clock=fake)
    assert queue.rate_limiter is limiter
    queue.add_rate_limited("a")
    assert fake.next_deadline() == 2.0


async def test_the_default_limiter_is_per_key_backoff_capped_by_an_overall_bucket() -> None:
    fake = clock.FakeClock()
    queue = workqueue.RateLimitingQueue[int](clock=fake)
    for key in range(101):  # first failures of distinct keys: each asks for 5 ms
        queue.add_rate_limited(key)
    fake.advance(0.005)
    assert len(queue) == 100, "the burst of 100 lets the first hundred through at 5 ms"
    assert fake.next_deadline() == pytest.approx(0.1), "the 101st waits for the bucket's next token"
    fake.advance(0.095)
    assert len(queue) == 101
