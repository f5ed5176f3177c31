"""Rate limiter sequences: exponential per item, a shared token bucket, and the max of both."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from olm_runtime import clock, workqueue


def test_exponential_limiter_doubles_from_5ms_and_is_capped_at_1000s() -> None:
    limiter = workqueue.ItemExponentialFailureRateLimiter[str]()
    delays = [limiter.when("a") for _ in range(21)]
    assert delays[:5] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08])
    assert delays[17] == pytest.approx(0.005 * 2**17)  # 655.36 s, the last one below the cap
    assert delays[18:] == [1000.0, 1000.0, 1000.0]
    assert limiter.num_requeues("a") == 21


def test_exponential_limiter_tracks_each_item_separately() -> None:
    limiter = workqueue.ItemExponentialFailureRateLimiter[str](base_delay=1.0, max_delay=60.0)
    assert [limiter.when("a"), limiter.when("a"), limiter.when("b")] == [1.0, 2.0, 1.0]
    assert (limiter.num_requeues("a"), limiter.num_requeues("b"), limiter.num_requeues("c")) == (2, 1, 0)


def test_exponential_limiter_starts_over_after_forget() -> None:
    limiter = workqueue.ItemExponentialFailureRateLimiter[str]()
    for _ in range(4):
        limiter.when("a")
    limiter.forget("a")
    limiter.forget("never-seen")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005


def test_exponential_limiter_stays_at_the_cap_after_very_many_failures() -> None:
    limiter = workqueue.ItemExponentialFailureRateLimiter[str](base_delay=0.005, max_delay=1000.0)
    for _ in range(5000):
        delay = limiter.when("a")
    assert delay == 1000.0


@pytest.mark.parametrize(
    ("base_delay", "max_delay"),
    [pytest.param(0.0, 1.0, id="zero-base"), pytest.param(2.0, 1.0, id="cap-below-base")],
)
def test_exponential_limiter_rejects_nonsense_bounds(base_delay: float, max_delay: float) -> None:
    with pytest.raises(ValueError, match="base_delay"):
        workqueue.ItemExponentialFailureRateLimiter[str](base_delay=base_delay, max_delay=max_delay)


def test_bucket_allows_a_burst_then_spaces_tries_100ms_apart() -> None:
    limiter = workqueue.BucketRateLimiter(qps=10, burst=100, clock=clock.FakeClock())
    delays = [limiter.when(f"item-{i}") for i in range(105)]
    assert delays[:100] == [0.0] * 100
    assert delays[100:] == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5])


def test_bucket_refills_at_its_rate_up_to_its_burst() -> None:
    fake = clock.FakeClock()
    limiter = workqueue.BucketRateLimiter(qps=10, burst=3, clock=fake)
    assert [limiter.when("x") for _ in range(3)] == [0.0, 0.0, 0.0]
    fake.advance(0.2)  # two tokens back
    assert [limiter.when("x") for _ in range(3)] == pytest.approx([0.0, 0.0, 0.1])
    fake.advance(3600.0)  # refills to the burst, not beyond
    assert [limiter.when("x") for _ in range(4)] == pytest.approx([0.0, 0.0, 0.0, 0.1])


def test_bucket_counts_reserved_future_tokens() -> None:
    fake = clock.FakeClock()
    limiter = workqueue.BucketRateLimiter(qps=10, burst=1, clock=fake)
    assert [limiter.when("x") for _ in range(4)] == pytest.approx([0.0, 0.1, 0.2, 0.3])
    fake.advance(0.15)  # 1.5 tokens came in, three were already promised
    assert limiter.when("x") == pytest.approx(0.25)


def test_bucket_keeps_no_per_item_state() -> None:
    limiter = workqueue.BucketRateLimiter(clock=clock.FakeClock())
    limiter.when("a")
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


@pytest.mark.parametrize(
    ("qps", "burst"), [pytest.param(0.0, 1, id="no-rate"), pytest.param(1.0, 0, id="no-burst")]
)
def test_bucket_rejects_nonsense_settings(qps: float, burst: int) -> None:
    with pytest.raises(ValueError, match="qps"):
        workqueue.BucketRateLimiter(qps=qps, burst=burst)


def test_max_of_waits_for_the_slowest_limiter_and_asks_every_one() -> None:
    fake = clock.FakeClock()
    exponential = workqueue.ItemExponentialFailureRateLimiter[str](base_delay=0.05, max_delay=10.0)
    bucket = workqueue.BucketRateLimiter(qps=1, burst=2, clock=fake)
    limiter = workqueue.MaxOfRateLimiter[str](exponential, bucket)
    assert [limiter.when("a") for _ in range(4)] == pytest.approx([0.05, 0.1, 1.0, 2.0])
    assert limiter.num_requeues("a") == 4
    limiter.forget("a")
    assert exponential.num_requeues("a") == 0


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError, match="at least one"):
        workqueue.MaxOfRateLimiter[str]()


def test_default_controller_rate_limiter_is_exponential_until_the_bucket_runs_dry() -> None:
    fake = clock.FakeClock()
    limiter = workqueue.default_controller_rate_limiter(clock=fake)
    # One item failing over and over: per-item backoff rules while the bucket has tokens.
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    # A flood of distinct items: the first 97 get the 5 ms backoff, then the bucket spaces them.
    delays = [limiter.when(f"item-{i}") for i in range(100)]
    assert delays[:97] == pytest.approx([0.005] * 97)
    assert delays[97:] == pytest.approx([0.1, 0.2, 0.3])


@given(
    base_delay=st.floats(min_value=1e-6, max_value=10.0),
    factor=st.floats(min_value=1.0, max_value=1e6),
    tries=st.integers(min_value=1, max_value=80),
)
def test_exponential_delays_start_at_the_base_and_double_up_to_the_cap(
    base_delay: float, factor: float, tries: int
) -> None:
    max_delay = base_delay * factor
    limiter = workqueue.ItemExponentialFailureRateLimiter[str](base_delay=base_delay, max_delay=max_delay)
    delays = [limiter.when("a") for _ in range(tries)]
    assert delays[0] == base_delay
    for previous, current in itertools.pairwise(delays):
        assert current == min(previous * 2, max_delay)


@given(
    qps=st.sampled_from([0.5, 1.0, 10.0, 100.0]),
    burst=st.integers(min_value=1, max_value=20),
    gaps=st.lists(st.sampled_from([0.0, 0.0, 0.01, 0.1, 1.0, 5.0]), min_size=1, max_size=60),
)
def test_bucket_never_lets_more_than_burst_plus_rate_through_in_any_window(
    qps: float, burst: int, gaps: list[float]
) -> None:
    fake = clock.FakeClock()
    limiter = workqueue.BucketRateLimiter(qps=qps, burst=burst, clock=fake)
    scheduled = []
    for gap in gaps:
        fake.advance(gap)
        scheduled.append(fake.now() + limiter.when("x"))
    assert scheduled == sorted(scheduled)  # reservations are served in the order they were made
    for i, start in enumerate(scheduled):
        for j in range(i, len(scheduled)):
            assert j - i + 1 <= burst + qps * (scheduled[j] - start) + 1e-6
