"""The controller's promises, with an in-process Channel source and a fake clock."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from olm_runtime import controller, metrics
from olm_runtime.client import errors
from olm_runtime.clock import FakeClock
from olm_runtime.controller._controller import Controller, Options
from olm_runtime.controller.event import GenericEvent
from olm_runtime.controller.reconcile import ReconcilerFunc, Request, Result, TerminalError
from olm_runtime.controller.source import Channel

_names = itertools.count()


def event(name: str) -> GenericEvent:
    return GenericEvent({"metadata": {"name": name, "namespace": "ns"}})


def sample(metric: str, controller: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(metric, {"controller": controller, **labels}) or 0.0


async def until(check: Callable[[], bool], what: str) -> None:
    """Let the event loop run until `check` holds; fail after 10 s. Everything here is in-process,
    so yielding to the loop is what moves the system on."""
    try:
        async with asyncio.timeout(10):
            while not check():  # noqa: ASYNC110 - nothing to wait on but other tasks' progress
                await asyncio.sleep(0)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


class Harness:
    def __init__(self, fn: Callable[[Request], Awaitable[Result]], **options: object) -> None:
        self.clock = FakeClock()
        self.events: asyncio.Queue[GenericEvent] = asyncio.Queue()
        self.name = f"test-{next(_names)}"
        self.controller = Controller(
            name=self.name,
            reconciler=ReconcilerFunc(fn),
            sources=[Channel(self.events)],
            options=Options(**options),  # type: ignore[arg-type]
            clock=self.clock,
        )

    async def advance_to_next_retry(self) -> None:
        deadline = self.clock.next_deadline()
        assert deadline is not None, "nothing is scheduled"
        self.clock.advance(deadline - self.clock.now())


@pytest.fixture
async def run() -> AsyncIterator[Callable[[Harness], None]]:
    tasks: list[asyncio.Task[None]] = []

    def start(harness: Harness) -> None:
        tasks.append(asyncio.create_task(harness.controller.start()))

    yield start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_failing_reconcile_is_retried_with_growing_delay(run: Callable[[Harness], None]) -> None:
    calls: list[float] = []

    async def fn(request: Request) -> Result:
        calls.append(harness.clock.now())
        if len(calls) < 4:
            raise errors.APIError(500, "InternalError", "try again")
        return Result()

    harness = Harness(fn)
    run(harness)
    harness.events.put_nowait(event("a"))
    for attempt in range(1, 4):
        await until(lambda attempt=attempt: len(calls) == attempt, f"attempt {attempt}")  # type: ignore[misc]
        await until(lambda: harness.clock.next_deadline() is not None, "a retry to be scheduled")
        await harness.advance_to_next_retry()
    await until(lambda: len(calls) == 4, "the fourth attempt")
    delays = [round(b - a, 6) for a, b in itertools.pairwise(calls)]
    assert delays == [0.005, 0.01, 0.02]
    assert harness.controller.queue.num_requeues(Request("a", "ns")) == 0  # forgotten after success
    assert sample("controller_runtime_reconcile_errors_total", harness.name) == 3
    assert sample("controller_runtime_reconcile_panics_total", harness.name) == 0
    assert sample("controller_runtime_reconcile_total", harness.name, result="success") == 1


async def test_a_terminal_error_is_not_retried(run: Callable[[Harness], None]) -> None:
    calls: list[Request] = []

    async def fn(request: Request) -> Result:
        calls.append(request)
        raise TerminalError("InvalidConfiguration", "fix the spec")

    harness = Harness(fn)
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(
        lambda: sample("controller_runtime_terminal_reconcile_errors_total", harness.name) == 1, "error"
    )
    assert harness.clock.next_deadline() is None  # nothing scheduled: it will not come back by itself
    assert calls == [Request("a", "ns")]
    harness.events.put_nowait(event("a"))  # a new event (the object changed) reconciles again
    await until(lambda: len(calls) == 2, "the second reconcile")


async def test_requeue_after_comes_back_after_the_delay(run: Callable[[Harness], None]) -> None:
    calls: list[float] = []

    async def fn(request: Request) -> Result:
        calls.append(harness.clock.now())
        return Result(requeue_after=30.0) if len(calls) == 1 else Result()

    harness = Harness(fn)
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(lambda: harness.clock.next_deadline() == 30.0, "the requeue to be scheduled")
    await harness.advance_to_next_retry()
    await until(lambda: len(calls) == 2, "the requeued reconcile")
    assert calls == [0.0, 30.0]
    assert sample("controller_runtime_reconcile_total", harness.name, result="requeue_after") == 1


async def test_the_same_key_is_never_reconciled_concurrently(run: Callable[[Harness], None]) -> None:
    in_flight: set[Request] = set()
    overlaps: list[Request] = []
    last_seen: dict[str, int] = {}
    generation = itertools.count()
    current: dict[str, int] = {}

    async def fn(request: Request) -> Result:
        if request in in_flight:
            overlaps.append(request)
        in_flight.add(request)
        last_seen[request.name] = current[request.name]
        for _ in range(3):
            await asyncio.sleep(0)
        in_flight.discard(request)
        return Result()

    harness = Harness(fn, max_concurrent_reconciles=8)
    run(harness)
    for index in range(2000):
        name = f"k{index % 10}"
        current[name] = next(generation)
        harness.events.put_nowait(event(name))
        if index % 7 == 0:
            await asyncio.sleep(0)
    await until(lambda: last_seen == current and not in_flight, "every key to see its latest state")
    assert overlaps == []


async def test_cancel_finishes_in_flight_reconciles(run: Callable[[Harness], None]) -> None:
    release = asyncio.Event()
    finished: list[Request] = []

    async def fn(request: Request) -> Result:
        await release.wait()
        finished.append(request)
        return Result()

    harness = Harness(fn)
    task = asyncio.create_task(harness.controller.start())
    harness.events.put_nowait(event("a"))
    await until(
        lambda: sample("controller_runtime_active_workers", harness.name) == 1, "the reconcile to start"
    )
    task.cancel()
    await until(lambda: harness.controller.queue.shutting_down, "shutdown to begin")
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert finished == [Request("a", "ns")]


async def test_an_unexpected_exception_counts_as_a_panic_and_is_retried(
    run: Callable[[Harness], None],
) -> None:
    calls: list[int] = []

    async def fn(request: Request) -> Result:
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("bug")
        return Result()

    harness = Harness(fn)
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(lambda: harness.clock.next_deadline() is not None, "a retry to be scheduled")
    assert sample("controller_runtime_reconcile_panics_total", harness.name) == 1
    await harness.advance_to_next_retry()
    await until(lambda: len(calls) == 2, "the retry")


async def test_a_reconcile_over_its_timeout_is_cancelled_and_retried(run: Callable[[Harness], None]) -> None:
    calls: list[int] = []

    async def fn(request: Request) -> Result:
        calls.append(1)
        if len(calls) == 1:
            await asyncio.Event().wait()  # hangs until the controller's timeout cancels it
        return Result()

    harness = Harness(fn, reconcile_timeout=0.05)
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(
        lambda: sample("controller_runtime_reconcile_timeouts_total", harness.name) == 1, "the timeout"
    )
    await until(lambda: harness.clock.next_deadline() is not None, "a retry to be scheduled")
    await harness.advance_to_next_retry()
    await until(lambda: len(calls) == 2, "the retry")


async def test_a_retryable_error_is_retried_without_counting_as_a_panic(
    run: Callable[[Harness], None],
) -> None:
    class RegistryDown(controller.RetryableError):
        pass

    calls: list[int] = []

    async def fn(request: Request) -> Result:
        calls.append(1)
        if len(calls) == 1:
            raise RegistryDown("the registry answered 503")
        return Result()

    harness = Harness(fn)
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(lambda: harness.clock.next_deadline() is not None, "a retry to be scheduled")
    assert sample("controller_runtime_reconcile_errors_total", harness.name) == 1
    assert sample("controller_runtime_reconcile_panics_total", harness.name) == 0
    await harness.advance_to_next_retry()
    await until(lambda: len(calls) == 2, "the retry")
