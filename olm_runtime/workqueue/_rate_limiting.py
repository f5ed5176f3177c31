"""The rate-limited queue: retries delayed by a `RateLimiter`."""

from __future__ import annotations

from typing import Unpack

from olm_runtime.workqueue import _delaying, _limiters
from olm_runtime.workqueue._queue import QueueOptions, T


class RateLimitingQueue(_delaying.DelayingQueue[T]):
    """A `DelayingQueue` whose retries wait as long as a rate limiter says.

    `rate_limiter` defaults to `default_controller_rate_limiter(clock=clock)`; the other options are
    those of `Queue`. The usual worker step: on failure `add_rate_limited(item)`, on success
    `forget(item)`, and `done(item)` either way.
    """

    def __init__(
        self, *, rate_limiter: _limiters.RateLimiter[T] | None = None, **options: Unpack[QueueOptions]
    ) -> None:
        super().__init__(**options)
        if rate_limiter is None:
            rate_limiter = _limiters.default_controller_rate_limiter(clock=self.clock)
        self._rate_limiter = rate_limiter

    @property
    def rate_limiter(self) -> _limiters.RateLimiter[T]:
        """The limiter that decides retry delays."""
        return self._rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """Add `item` after the delay the rate limiter gives it (equals `add_after(item, when(item))`).

        Ignored while shutting down, without asking the limiter.
        """
        if self._shutting_down:
            return
        self.add_after(item, self._rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Tell the rate limiter `item` succeeded, so its next failure starts from the first delay."""
        self._rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many rate-limited retries `item` has had since it was last forgotten."""
        return self._rate_limiter.num_requeues(item)
