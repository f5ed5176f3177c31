"""Rate limiters: how long an item should wait before its next try."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from olm_runtime import clock as _clock
from olm_runtime.workqueue._queue import T

T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)


class RateLimiter(Protocol[T_contra]):
    """Decides the delay of each retry of an item; `RateLimitingQueue.add_rate_limited` asks it."""

    def when(self, item: T_contra) -> float:
        """Seconds `item` should wait before its next try; records the try."""

    def forget(self, item: T_contra) -> None:
        """Stop tracking `item`: its next failure starts from the first delay again."""

    def num_requeues(self, item: T_contra) -> int:
        """How many times `item` has been retried since it was last forgotten."""


class ItemExponentialFailureRateLimiter(Generic[T]):
    """Per item: `base_delay * 2**n` for the n-th retry since `forget` (from 0), capped at `max_delay`.

    With the defaults: 5 ms, 10 ms, 20 ms, ... 655 s, then 1000 s from the 19th retry on. Each item
    costs one dict entry until it is forgotten, so callers must `forget` items that succeeded.
    """

    def __init__(self, *, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        if not 0 < base_delay <= max_delay:
            raise ValueError(f"need 0 < base_delay <= max_delay, got {base_delay} and {max_delay}")
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._failures: dict[T, int] = {}

    def when(self, item: T) -> float:
        failures = self._failures.get(item, 0)
        self._failures[item] = failures + 1
        try:
            delay = math.ldexp(self._base_delay, failures)
        except OverflowError:
            return self._max_delay
        return min(delay, self._max_delay)

    def forget(self, item: T) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """One token bucket shared by all items: `burst` tries at once, then `qps` per second overall.

    The bucket starts full and refills continuously. A try that finds it empty reserves a future
    token, so a flood of retries is spread out: with the defaults, after 100 immediate retries each
    further one waits 100 ms more than the one before (as golang.org/x/time/rate reserves). It keeps
    no per-item state: `forget` does nothing and `num_requeues` is always 0.
    """

    def __init__(self, *, qps: float = 10.0, burst: int = 100, clock: _clock.Clock = _clock.REAL) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"need qps > 0 and burst >= 1, got {qps} and {burst}")
        self._qps = qps
        self._burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: object) -> float:
        now = self._clock.now()
        tokens = self._tokens
        if self._last is not None and now > self._last:
            tokens = min(float(self._burst), tokens + (now - self._last) * self._qps)
        tokens -= 1.0
        self._tokens = tokens
        self._last = now
        return 0.0 if tokens >= 0 else -tokens / self._qps

    def forget(self, item: object) -> None:
        pass

    def num_requeues(self, item: object) -> int:
        return 0


class MaxOfRateLimiter(Generic[T]):
    """Asks every limiter (so each records the try) and waits for the longest delay among them."""

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, item: T) -> float:
        return max([limiter.when(item) for limiter in self._limiters])

    def forget(self, item: T) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return max(limiter.num_requeues(item) for limiter in self._limiters)


def default_controller_rate_limiter(*, clock: _clock.Clock = _clock.REAL) -> MaxOfRateLimiter[Hashable]:
    """client-go's default for controllers: the slower of per-item exponential backoff (5 ms doubling
    to 1000 s) and an overall bucket of 10 retries per second with a burst of 100.

    Equals `MaxOfRateLimiter(ItemExponentialFailureRateLimiter(), BucketRateLimiter(clock=clock))`.
    """
    return MaxOfRateLimiter[Hashable](
        ItemExponentialFailureRateLimiter[Hashable](), BucketRateLimiter(clock=clock)
    )
