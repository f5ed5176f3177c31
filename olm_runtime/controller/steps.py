"""A reconcile written as a list of named steps over one state object.

Each step is an async function that reads and writes the state and returns `CONTINUE` or `STOP`.
`Steps.run` calls them in order until one stops, timing each, and returns what happened, so the
reconciler's body is the list of steps and the final status write, nothing else:

    steps = Steps("clusterextension", (self.resolve, self.unpack, self.apply))
    ran = await steps.run(state, key=request.name)
    await self.write_status(state)

Around every step it enters the `hook` (by default an OpenTelemetry span named after the step, a
no-op unless the process configured a tracer provider) and logs the step's duration at debug level.
A step that raises ends the run: the exception propagates to the controller, which retries the key
with backoff, as any reconcile error does.
"""

from __future__ import annotations

import contextlib
import enum
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import structlog

from olm_runtime import tracing

__all__ = ["CONTINUE", "STOP", "Next", "Ran", "Step", "StepHook", "Steps", "span_hook"]

S = TypeVar("S")
_log = structlog.get_logger("olm_runtime.controller.steps")


class Next(enum.Enum):
    """What a step tells the runner."""

    CONTINUE = "continue"
    STOP = "stop"


CONTINUE = Next.CONTINUE
STOP = Next.STOP

Step = Callable[[S], Awaitable[Next]]


class StepHook(Protocol):
    """Entered around each step: `hook(controller, step, key)` returns a context manager."""

    def __call__(self, controller: str, step: str, key: str) -> contextlib.AbstractContextManager[object]: ...


@contextlib.contextmanager
def span_hook(controller: str, step: str, key: str) -> Iterator[object]:
    """One tracing span per step, a child of whatever span the reconcile runs in."""
    with tracing.tracer().start_as_current_span(
        f"{controller}/{step}", attributes={"controller": controller, "step": step, "key": key}
    ) as span:
        yield span


@dataclass(frozen=True)
class Ran:
    """What one run did: the steps that ran, in order, with their durations."""

    seconds: tuple[tuple[str, float], ...]
    stopped_at: str | None
    """The step that returned `STOP`; None when every step continued."""

    @property
    def completed(self) -> bool:
        return self.stopped_at is None


def step_name(step: Callable[..., object]) -> str:
    """A step's name as logs and spans show it: its function name without leading underscores."""
    return getattr(step, "__name__", type(step).__name__).lstrip("_")


class Steps(Generic[S]):
    """The ordered steps of one reconciler."""

    def __init__(
        self,
        controller: str,
        steps: Sequence[Step[S]],
        *,
        hook: StepHook = span_hook,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        names = [step_name(s) for s in steps]
        if len(set(names)) != len(names):
            raise ValueError(f"{controller}: step names must be unique, got {names}")
        self.controller = controller
        self._steps = tuple(zip(names, steps, strict=True))
        self._hook = hook
        self._now = now

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self._steps)

    async def run(self, state: S, *, key: str) -> Ran:
        """Run the steps over `state` in order until one returns `STOP`."""
        timings: list[tuple[str, float]] = []
        for name, step in self._steps:
            started = self._now()
            with self._hook(self.controller, name, key):
                outcome = await step(state)
            seconds = self._now() - started
            timings.append((name, seconds))
            _log.debug("step done", controller=self.controller, step=name, key=key, seconds=round(seconds, 4))
            if outcome is STOP:
                return Ran(seconds=tuple(timings), stopped_at=name)
            if outcome is not CONTINUE:
                raise TypeError(f"{self.controller}: step {name} returned {outcome!r}, not CONTINUE or STOP")
        return Ran(seconds=tuple(timings), stopped_at=None)
