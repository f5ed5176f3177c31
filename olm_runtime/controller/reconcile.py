"""What a reconciler receives and returns, and how it says "stop retrying".

There is exactly one spelling for each outcome:

- return `Result()`: done; the key is forgotten by the rate limiter;
- return `Result(requeue_after=s)`: come back in `s` seconds (level-based polling);
- raise any exception: retried with per-key exponential backoff (rate-limited); raise a
  `RetryableError` (or an API, OS or timeout error) for failures that are expected, so they are
  not logged and counted as bugs;
- raise `TerminalError(reason, message)`: not retried until the object changes again; the reason and
  message are meant for the object's status condition.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, order=True)
class Request:
    """The key of one object to reconcile. `namespace` is empty for cluster-scoped objects."""

    name: str
    namespace: str = ""

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, kw_only=True)
class Result:
    requeue_after: float | None = None
    """Seconds after which to reconcile again even if nothing changes; None means not at all."""

    def __post_init__(self) -> None:
        if self.requeue_after is not None and self.requeue_after < 0:
            raise ValueError("requeue_after must not be negative")


class TerminalError(Exception):
    """A failure retrying cannot fix: the object must change first.

    `reason` is a CamelCase condition reason; `message` says what to change.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class RetryableError(Exception):
    """A failure the reconciler expects and wants retried with backoff (a registry that is down,
    content that is not there yet). Like any exception it is retried; unlike an unexpected one it
    is logged without a traceback and not counted as a panic. Subclass it for your own errors."""


class Reconciler(Protocol):
    async def reconcile(self, request: Request) -> Result: ...


@dataclass(frozen=True)
class ReconcilerFunc:
    """Adapts a plain `async def fn(request) -> Result` to the Reconciler protocol."""

    fn: Callable[[Request], Awaitable[Result]]

    async def reconcile(self, request: Request) -> Result:
        return await self.fn(request)
