"""What the manager runs: anything with `async def start(self) -> None` that blocks until cancelled."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Protocol

__all__ = ["Runnable", "name_of", "needs_leader_election", "runnable_from"]


class Runnable(Protocol):
    """A long-running component: caches, controllers, servers, flushers.

    `start()` runs until the task running it is cancelled, then cleans up and returns (or re-raises
    the cancellation). Raising anything else is a failure that stops the whole manager. Returning
    early is allowed and means the component has nothing more to do.

    An optional attribute or property `needs_leader_election: bool` says whether it may run only on
    the elected replica; when absent it counts as True (the safe default, as in controller-runtime).
    An optional `name: str` names it in logs.
    """

    async def start(self) -> None: ...


def needs_leader_election(runnable: object) -> bool:
    """The runnable's `needs_leader_election`, True when it does not say."""
    return bool(getattr(runnable, "needs_leader_election", True))


def name_of(runnable: object) -> str:
    """The runnable's `name` if it has a non-empty one, else its class name."""
    name = getattr(runnable, "name", None)
    return name if isinstance(name, str) and name else type(runnable).__name__


@dataclasses.dataclass(frozen=True)
class _FunctionRunnable:
    function: Callable[[], Awaitable[None]]
    name: str
    needs_leader_election: bool

    async def start(self) -> None:
        await self.function()


def runnable_from(
    function: Callable[[], Awaitable[None]], *, needs_leader_election: bool = True, name: str | None = None
) -> Runnable:
    """Wrap a coroutine function (run until cancelled) as a runnable; `name` defaults to its name."""
    default = getattr(function, "__name__", None)
    chosen = name or (default if isinstance(default, str) else "function")
    return _FunctionRunnable(function, chosen, needs_leader_election)
