"""The controller's promises, with an in-process Channel source and a fake clock."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import structlog
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from olm_runtime import controller, metrics, workqueue
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

    async def until_a_retry_is_scheduled(self) -> None:
        await until(lambda: self.clock.next_deadline() is not None, "a retry to be scheduled")

    async def until_retried(self, calls: list[int]) -> None:
        """Bring the scheduled retry due and wait for it, the second call of a `fails_once` reconciler."""
        await self.advance_to_next_retry()
        await until(lambda: len(calls) == 2, "the retry")


def fails_once(error: BaseException, calls: list[int]) -> Callable[[Request], Awaitable[Result]]:
    """A reconcile function that raises `error` on its first call and succeeds after; every call is
    counted in `calls`."""

    async def fn(request: Request) -> Result:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return Result()

    return fn


@pytest.fixture
async def run() -> AsyncIterator[Callable[[Harness], None]]:
    tasks: list[asyncio.Task[None]] = []

    def start(harness: Harness) -> None:
        tasks.append(asyncio.create_task(harness.controller.start()))

    yield start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_raised_exception_retries_the_key_with_per_key_exponential_backoff(
    run: Callable[[Harness], None],
) -> None:
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
        await harness.until_a_retry_is_scheduled()
        await harness.advance_to_next_retry()
    await until(lambda: len(calls) == 4, "the fourth attempt")
    delays = [round(b - a, 6) for a, b in itertools.pairwise(calls)]
    assert delays == [0.005, 0.01, 0.02]
    assert harness.controller.queue.num_requeues(Request("a", "ns")) == 0  # forgotten after success
    assert sample("controller_runtime_reconcile_errors_total", harness.name) == 3
    assert sample("controller_runtime_reconcile_panics_total", harness.name) == 0
    assert sample("controller_runtime_reconcile_total", harness.name, result="success") == 1


async def test_a_terminal_error_is_not_retried_until_a_new_event_arrives(
    run: Callable[[Harness], None],
) -> None:
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


async def test_one_key_is_never_reconciled_by_two_workers_at_once(run: Callable[[Harness], None]) -> None:
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


async def test_on_cancellation_the_reconciles_in_flight_finish(run: Callable[[Harness], None]) -> None:
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
    harness = Harness(fails_once(KeyError("bug"), calls))
    run(harness)
    harness.events.put_nowait(event("a"))
    await harness.until_a_retry_is_scheduled()
    assert sample("controller_runtime_reconcile_panics_total", harness.name) == 1
    await harness.until_retried(calls)


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
    await harness.until_a_retry_is_scheduled()
    await harness.until_retried(calls)


async def test_a_retryable_error_is_retried_without_counting_as_a_panic(
    run: Callable[[Harness], None],
) -> None:
    class RegistryDown(controller.RetryableError):
        pass

    calls: list[int] = []
    harness = Harness(fails_once(RegistryDown("the registry answered 503"), calls))
    run(harness)
    harness.events.put_nowait(event("a"))
    await harness.until_a_retry_is_scheduled()
    assert sample("controller_runtime_reconcile_errors_total", harness.name) == 1
    assert sample("controller_runtime_reconcile_panics_total", harness.name) == 0
    await harness.until_retried(calls)


class GatedSource:
    """A source that enqueues its keys at once but reports its initial state delivered only when the
    test opens the gate, like an informer still listing."""

    def __init__(self, *names: str) -> None:
        self.names = names
        self.synced = asyncio.Event()

    async def start(self, queue: workqueue.RateLimitingQueue[Request]) -> None:
        for name in self.names:
            queue.add(Request(name, "ns"))
        await asyncio.Event().wait()

    async def wait_for_sync(self) -> None:
        await self.synced.wait()


async def test_workers_start_only_after_every_source_has_delivered_its_initial_state() -> None:
    calls: list[Request] = []

    async def fn(request: Request) -> Result:
        calls.append(request)
        return Result()

    ready, listing = GatedSource("a"), GatedSource("b")
    ctrl = Controller(name=f"test-{next(_names)}", reconciler=ReconcilerFunc(fn), sources=[ready, listing])
    ready.synced.set()
    task = asyncio.create_task(ctrl.start())
    try:
        await until(lambda: len(ctrl.queue) == 2, "both sources to enqueue their keys")
        for _ in range(50):
            await asyncio.sleep(0)
        assert calls == [], "a worker started before every source synced"
        listing.synced.set()
        await until(lambda: len(calls) == 2, "both keys to be reconciled")
        assert sorted(calls) == [Request("a", "ns"), Request("b", "ns")]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_sources_that_do_not_sync_within_the_cache_sync_timeout_fail_the_start() -> None:
    async def fn(request: Request) -> Result:
        raise AssertionError("no worker may run")

    never = GatedSource("a")
    ctrl = Controller(
        name=f"test-{next(_names)}",
        reconciler=ReconcilerFunc(fn),
        sources=[never],
        options=Options(cache_sync_timeout=0.05),
    )
    with pytest.raises(ExceptionGroup) as raised:
        await asyncio.wait_for(ctrl.start(), 10)
    assert [type(e) for e in raised.value.exceptions] == [TimeoutError]


async def test_a_key_added_while_it_is_being_reconciled_is_reconciled_again_afterwards(
    run: Callable[[Harness], None],
) -> None:
    release = asyncio.Event()
    seen: list[str] = []
    state = {"a": "v1"}
    in_flight = 0
    most_in_flight = 0

    async def fn(request: Request) -> Result:
        nonlocal in_flight, most_in_flight
        in_flight += 1
        most_in_flight = max(most_in_flight, in_flight)
        seen.append(state["a"])  # a level-based reconciler reads the current state
        if len(seen) == 1:
            await release.wait()
        in_flight -= 1
        return Result()

    harness = Harness(fn, max_concurrent_reconciles=4)
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(lambda: seen == ["v1"], "the first reconcile")
    state["a"] = "v2"
    harness.events.put_nowait(event("a"))
    harness.events.put_nowait(event("a"))
    await until(lambda: harness.events.empty() and len(harness.controller.queue) == 0, "the adds")
    assert seen == ["v1"], "the key was handed to a second worker while the first held it"
    release.set()
    await until(lambda: len(seen) == 2, "the reconcile of the change")
    assert seen == ["v1", "v2"]
    assert most_in_flight == 1


async def test_after_a_success_the_next_failure_starts_again_from_the_first_delay(
    run: Callable[[Harness], None],
) -> None:
    outcomes = iter(["fail", "fail", "fail", "ok", "fail", "ok"])
    calls: list[float] = []

    async def fn(request: Request) -> Result:
        calls.append(harness.clock.now())
        if next(outcomes) == "fail":
            raise controller.RetryableError("not yet")
        return Result()

    harness = Harness(fn)
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(lambda: len(calls) == 1, "the first attempt")
    for attempt in (2, 3, 4):
        await harness.until_a_retry_is_scheduled()
        await harness.advance_to_next_retry()
        await until(lambda attempt=attempt: len(calls) == attempt, f"attempt {attempt}")  # type: ignore[misc]
    harness.events.put_nowait(event("a"))  # the object changes again after the success
    await until(lambda: len(calls) == 5, "the reconcile of the change")
    await harness.until_a_retry_is_scheduled()
    assert harness.clock.next_deadline() - calls[-1] == pytest.approx(0.005)  # type: ignore[operator]
    await harness.advance_to_next_retry()
    await until(lambda: len(calls) == 6, "the retry")


async def test_different_keys_are_reconciled_in_parallel_up_to_max_concurrent_reconciles(
    run: Callable[[Harness], None],
) -> None:
    release = asyncio.Event()
    in_flight: set[str] = set()
    most = 0

    async def fn(request: Request) -> Result:
        nonlocal most
        in_flight.add(request.name)
        most = max(most, len(in_flight))
        await release.wait()
        in_flight.discard(request.name)
        return Result()

    harness = Harness(fn, max_concurrent_reconciles=3)
    run(harness)
    for name in "abcde":
        harness.events.put_nowait(event(name))
    await until(lambda: len(in_flight) == 3, "three reconciles in flight")
    for _ in range(50):
        await asyncio.sleep(0)
    assert len(in_flight) == 3, "more reconciles ran at once than there are workers"
    assert sample("controller_runtime_max_concurrent_reconciles", harness.name) == 3
    assert sample("controller_runtime_active_workers", harness.name) == 3
    release.set()
    await until(
        lambda: sample("controller_runtime_reconcile_total", harness.name, result="success") == 5, "all"
    )
    assert most == 3


async def test_on_cancellation_queued_keys_are_not_started(run: Callable[[Harness], None]) -> None:
    release = asyncio.Event()
    started: list[str] = []

    async def fn(request: Request) -> Result:
        started.append(request.name)
        await release.wait()
        return Result()

    harness = Harness(fn)
    task = asyncio.create_task(harness.controller.start())
    harness.events.put_nowait(event("a"))
    harness.events.put_nowait(event("b"))
    await until(lambda: started == ["a"] and len(harness.controller.queue) == 1, "a in flight, b queued")
    task.cancel()
    await until(lambda: harness.controller.queue.shutting_down, "shutdown to begin")
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert started == ["a"]


async def test_every_reconcile_logs_with_the_controller_the_object_and_its_own_reconcile_id(
    run: Callable[[Harness], None],
) -> None:
    contexts: list[dict[str, object]] = []

    async def fn(request: Request) -> Result:
        contexts.append(structlog.contextvars.get_contextvars())
        return Result()

    harness = Harness(fn)
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(lambda: len(contexts) == 1, "the first reconcile")
    harness.events.put_nowait(event("b"))
    await until(lambda: len(contexts) == 2, "the second reconcile")
    assert [(c["controller"], c["object"]) for c in contexts] == [
        (harness.name, "ns/a"),
        (harness.name, "ns/b"),
    ]
    first, second = (str(c["reconcile_id"]) for c in contexts)
    assert first != second
    assert len(first) == 16
    assert structlog.contextvars.get_contextvars().get("reconcile_id") is None, "the binding leaked"


async def test_every_reconcile_runs_in_a_span_named_after_the_controller(
    run: Callable[[Harness], None], span_exporter: InMemorySpanExporter
) -> None:
    calls: list[int] = []
    harness = Harness(fails_once(controller.RetryableError("registry down"), calls))
    run(harness)
    harness.events.put_nowait(event("a"))
    await harness.until_a_retry_is_scheduled()
    await harness.until_retried(calls)

    def reconcile_spans() -> list[ReadableSpan]:
        return [s for s in span_exporter.get_finished_spans() if s.name == f"reconcile {harness.name}"]

    await until(lambda: len(reconcile_spans()) == 2, "both spans to end")
    failed, succeeded = reconcile_spans()
    attributes = dict(failed.attributes or {})
    assert attributes == {
        "controller": harness.name,
        "object.name": "a",
        "object.namespace": "ns",
        "reconcile.id": attributes["reconcile.id"],
    }
    assert len(str(attributes["reconcile.id"])) == 16
    assert (succeeded.attributes or {})["reconcile.id"] != attributes["reconcile.id"]
    assert failed.status.status_code is trace.StatusCode.ERROR
    assert [e.name for e in failed.events] == ["exception"]
    assert succeeded.events == ()


async def test_a_controller_that_knows_its_kind_names_it_in_the_span_and_the_log_context(
    run: Callable[[Harness], None], span_exporter: InMemorySpanExporter
) -> None:
    contexts: list[dict[str, object]] = []

    async def fn(request: Request) -> Result:
        contexts.append(structlog.contextvars.get_contextvars())
        return Result()

    harness = Harness(fn)
    harness.controller.kind = "Widget"
    run(harness)
    harness.events.put_nowait(event("a"))
    await until(lambda: len(contexts) == 1, "the reconcile")
    await until(
        lambda: any(s.name == f"reconcile {harness.name}" for s in span_exporter.get_finished_spans()),
        "the span to end",
    )
    (span,) = [s for s in span_exporter.get_finished_spans() if s.name == f"reconcile {harness.name}"]
    assert (span.attributes or {})["object.kind"] == "Widget"
    assert contexts[0]["kind"] == "Widget"
    assert contexts[0]["reconcile_id"] == (span.attributes or {})["reconcile.id"]


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(errors.APIError(409, "Conflict", "the object has been modified"), id="api-error"),
        pytest.param(ConnectionResetError("reset by peer"), id="os-error"),
        pytest.param(TimeoutError("registry did not answer"), id="timeout-error"),
    ],
)
async def test_expected_errors_are_retried_without_counting_as_panics(
    run: Callable[[Harness], None], error: Exception
) -> None:
    calls: list[int] = []
    harness = Harness(fails_once(error, calls))
    run(harness)
    harness.events.put_nowait(event("a"))
    await harness.until_a_retry_is_scheduled()
    assert sample("controller_runtime_reconcile_errors_total", harness.name) == 1
    assert sample("controller_runtime_reconcile_panics_total", harness.name) == 0
    assert sample("controller_runtime_reconcile_timeouts_total", harness.name) == 0
    await harness.until_retried(calls)


async def test_the_controllers_queue_and_reconciles_report_under_its_name(
    run: Callable[[Harness], None],
) -> None:
    outcomes = iter(["error", "ok"])

    async def fn(request: Request) -> Result:
        if next(outcomes) == "error":
            raise controller.RetryableError("not yet")
        return Result()

    harness = Harness(fn)
    run(harness)
    harness.events.put_nowait(event("a"))
    await harness.until_a_retry_is_scheduled()
    await harness.advance_to_next_retry()
    await until(
        lambda: sample("controller_runtime_reconcile_total", harness.name, result="success") == 1, "ok"
    )
    assert sample("controller_runtime_reconcile_total", harness.name, result="error") == 1
    assert sample("controller_runtime_reconcile_time_seconds_count", harness.name) == 2
    queue_labels = {"name": harness.name, "controller": harness.name}
    assert metrics.REGISTRY.get_sample_value("workqueue_adds_total", queue_labels) == 2
    assert metrics.REGISTRY.get_sample_value("workqueue_retries_total", queue_labels) == 1


def test_a_negative_requeue_after_is_refused() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        Result(requeue_after=-1)


def test_a_request_prints_as_namespace_slash_name_or_name_alone() -> None:
    assert str(Request("a", "ns")) == "ns/a"
    assert str(Request("cluster-wide")) == "cluster-wide"


def test_at_least_one_worker_is_required() -> None:
    async def fn(request: Request) -> Result:
        return Result()

    with pytest.raises(ValueError, match="at least 1"):
        Controller(
            name="none",
            reconciler=ReconcilerFunc(fn),
            sources=[],
            options=Options(max_concurrent_reconciles=0),
        )
