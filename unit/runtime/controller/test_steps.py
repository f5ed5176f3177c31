"""The step runner's promises: order, stop, timing, the hook around each step, errors."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from olm_runtime.controller import CONTINUE, STOP, Next, Steps


@dataclass
class State:
    seen: list[str] = field(default_factory=list)


async def first(state: State) -> Next:
    state.seen.append("first")
    return CONTINUE


async def second(state: State) -> Next:
    state.seen.append("second")
    return STOP


async def third(state: State) -> Next:
    state.seen.append("third")
    return CONTINUE


def no_hook(controller: str, step: str, key: str) -> contextlib.AbstractContextManager[object]:
    return contextlib.nullcontext()


async def test_steps_run_in_order_until_one_stops() -> None:
    state = State()
    ran = await Steps("c", (first, second, third), hook=no_hook).run(state, key="k")
    assert state.seen == ["first", "second"]
    assert ran.stopped_at == "second"
    assert not ran.completed
    assert [name for name, _ in ran.seconds] == ["first", "second"]


async def test_a_run_where_every_step_continues_is_completed() -> None:
    state = State()
    ran = await Steps("c", (first, third), hook=no_hook).run(state, key="k")
    assert state.seen == ["first", "third"]
    assert ran.completed
    assert ran.stopped_at is None


async def test_each_step_is_timed_on_the_given_clock() -> None:
    ticks = itertools.count(step=0.5)
    ran = await Steps("c", (first, third), hook=no_hook, now=lambda: next(ticks)).run(State(), key="k")
    assert ran.seconds == (("first", 0.5), ("third", 0.5))


async def test_step_names_drop_leading_underscores_and_must_be_unique() -> None:
    async def _private(state: State) -> Next:
        return CONTINUE

    assert Steps("c", (_private, first), hook=no_hook).names == ("private", "first")
    with pytest.raises(ValueError, match="unique"):
        Steps("c", (first, first), hook=no_hook)


async def test_the_hook_wraps_every_step_that_runs() -> None:
    entered: list[tuple[str, str, str]] = []
    exited: list[str] = []

    @contextlib.contextmanager
    def hook(controller: str, step: str, key: str) -> Iterator[None]:
        entered.append((controller, step, key))
        yield
        exited.append(step)

    await Steps("ctl", (first, second, third), hook=hook).run(State(), key="ns/name")
    assert entered == [("ctl", "first", "ns/name"), ("ctl", "second", "ns/name")]
    assert exited == ["first", "second"]


async def test_an_exception_ends_the_run_and_propagates() -> None:
    async def broken(state: State) -> Next:
        raise RuntimeError("registry down")

    state = State()
    with pytest.raises(RuntimeError, match="registry down"):
        await Steps("c", (first, broken, third), hook=no_hook).run(state, key="k")
    assert state.seen == ["first"]


async def test_a_step_returning_something_else_is_a_type_error() -> None:
    async def sloppy(state: State) -> Next:
        return True  # type: ignore[return-value]  # the mistake the runner must catch

    with pytest.raises(TypeError, match="sloppy returned True"):
        await Steps("c", (sloppy,), hook=no_hook).run(State(), key="k")


async def test_by_default_each_step_is_a_tracing_span(span_exporter: InMemorySpanExporter) -> None:
    await Steps("spans-test", (first, second)).run(State(), key="x")

    spans = [s for s in span_exporter.get_finished_spans() if s.name.startswith("spans-test/")]
    assert [s.name for s in spans] == ["spans-test/first", "spans-test/second"]
    assert dict(spans[0].attributes or {}) == {"controller": "spans-test", "step": "first", "key": "x"}
