"""Workqueue operations per second, in process: add/get/done cycles under a few workloads.

Run: `uv run --frozen python -m hack.bench.runtime.workqueue_ops [--items N] [--repeat R]`.
Each figure is the best of R runs. A cycle is one add, one get and one done of a distinct item
unless the line says otherwise. "named" queues record the workqueue_* metrics (on a private
registry); unnamed ones record none.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import time
from collections.abc import Callable, Coroutine
from typing import Any

from prometheus_client import CollectorRegistry

from olm_runtime import clock, workqueue

Scenario = Callable[[int], Coroutine[Any, Any, int]]


def _queue(named: bool, fake: clock.Clock = clock.REAL) -> workqueue.RateLimitingQueue[int]:
    if named:
        provider = workqueue.WorkqueueMetrics(CollectorRegistry())
        return workqueue.RateLimitingQueue[int](name="bench", clock=fake, metrics=provider)
    return workqueue.RateLimitingQueue[int](clock=fake)


def one_at_a_time(named: bool) -> Scenario:
    """A single stream: add an item, get it, done it, then the next one."""

    async def run(items: int) -> int:
        queue = _queue(named)
        for i in range(items):
            queue.add(i)
            queue.done(await queue.get())
        return items

    return run


def prefilled(workers: int, named: bool) -> Scenario:
    """Many distinct items queued up front, then drained by `workers` workers."""

    async def run(items: int) -> int:
        queue = _queue(named)
        for i in range(items):
            queue.add(i)
        await _drain(queue, workers, items)
        return items

    return run


def handoff(workers: int, batch: int) -> Scenario:
    """Workers wait in get while a producer adds `batch` items at a time: every batch wakes them."""

    async def run(items: int) -> int:
        queue = _queue(named=False)

        async def produce() -> None:
            for start in range(0, items, batch):
                for i in range(start, min(start + batch, items)):
                    queue.add(i)
                await asyncio.sleep(0)

        async with asyncio.TaskGroup() as group:
            group.create_task(produce())
            group.create_task(_drain(queue, workers, items))
        return items

    return run


def duplicate_adds(keys: int) -> Scenario:
    """Adds of items already queued (merged): `items` adds over `keys` distinct keys, no get."""

    async def run(items: int) -> int:
        queue = _queue(named=False)
        for i in range(items):
            queue.add(i % keys)
        return items

    return run


def delayed(distinct_deadlines: bool) -> Scenario:
    """add_after on a fake clock, the clock advanced past every deadline, then get and done."""

    async def run(items: int) -> int:
        fake = clock.FakeClock()
        queue = _queue(named=False, fake=fake)
        for i in range(items):
            queue.add_after(i, 1.0 + (i % 1000) * 0.001 if distinct_deadlines else 1.0)
        fake.advance(10.0)
        for _ in range(items):
            queue.done(await queue.get())
        return items

    return run


def rate_limited() -> Scenario:
    """add_rate_limited with the default limiter (fake clock), then get, done and forget."""

    async def run(items: int) -> int:
        fake = clock.FakeClock()
        queue = _queue(named=False, fake=fake)
        for i in range(items):
            queue.add_rate_limited(i)
        while (deadline := fake.next_deadline()) is not None:
            fake.advance(deadline - fake.now())
        for _ in range(items):
            item = await queue.get()
            queue.forget(item)
            queue.done(item)
        return items

    return run


async def _drain(queue: workqueue.RateLimitingQueue[int], workers: int, items: int) -> None:
    processed = 0

    async def work() -> None:
        nonlocal processed
        while True:
            try:
                item = await queue.get()
            except workqueue.ShutDown:
                return
            queue.done(item)
            processed += 1
            if processed == items:
                queue.shut_down()

    async with asyncio.TaskGroup() as group:
        for _ in range(workers):
            group.create_task(work())


SCENARIOS: list[tuple[str, Scenario]] = [
    ("one at a time, unnamed", one_at_a_time(named=False)),
    ("one at a time, named (metrics on)", one_at_a_time(named=True)),
    ("prefilled, 1 worker, unnamed", prefilled(1, named=False)),
    ("prefilled, 1 worker, named", prefilled(1, named=True)),
    ("prefilled, 10 workers, unnamed", prefilled(10, named=False)),
    ("prefilled, 100 workers, unnamed", prefilled(100, named=False)),
    ("prefilled, 100 workers, named", prefilled(100, named=True)),
    ("handoff, 10 workers, batches of 1", handoff(10, batch=1)),
    ("handoff, 10 workers, batches of 100", handoff(10, batch=100)),
    ("add_after (1000 deadlines) + get/done", delayed(distinct_deadlines=True)),
    ("add_after (one deadline) + get/done", delayed(distinct_deadlines=False)),
    ("add_rate_limited + get/forget/done", rate_limited()),
    ("duplicate adds over 1000 keys (adds/s)", duplicate_adds(1000)),
]


def _best(scenario: Scenario, items: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        done = asyncio.run(scenario(items))
        elapsed = time.perf_counter() - started
        best = min(best, elapsed / done)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200_000, help="items per run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per scenario; the best counts")
    args = parser.parse_args()
    print(
        f"workqueue ops: {platform.python_implementation()} {platform.python_version()}, {platform.machine()}"
    )
    print(f"{args.items:,} items per run, best of {args.repeat}")
    print(f"{'scenario':<42} {'per second':>12} {'per op':>10}")
    for label, scenario in SCENARIOS:
        seconds = _best(scenario, args.items, args.repeat)
        print(f"{label:<42} {1 / seconds:>12,.0f} {seconds * 1e6:>8.2f}µs")


if __name__ == "__main__":
    main()
