"""Under a flood of adds with many workers, no key is processed twice at once and no add is lost."""

from __future__ import annotations

import asyncio
import random

from olm_runtime import workqueue

KEYS = 25
WORKERS = 64
PRODUCERS = 8
ADDS_PER_PRODUCER = 2_000


async def test_the_same_key_is_never_handed_to_two_concurrent_workers_under_a_flood_of_adds() -> None:
    rng = random.Random(20240601)
    queue = workqueue.Queue[int]()
    in_flight: set[int] = set()
    most_in_flight = 0
    tick = 0
    last_add: dict[int, int] = {}
    last_start: dict[int, int] = {}
    overlaps: list[int] = []

    async def produce() -> None:
        nonlocal tick
        for _ in range(ADDS_PER_PRODUCER):
            key = rng.randrange(KEYS)
            tick += 1
            last_add[key] = tick
            queue.add(key)
            if rng.random() < 0.3:
                await asyncio.sleep(0)

    async def work() -> None:
        nonlocal tick, most_in_flight
        while True:
            try:
                key = await queue.get()
            except workqueue.ShutDown:
                return
            if key in in_flight:
                overlaps.append(key)
            in_flight.add(key)
            most_in_flight = max(most_in_flight, len(in_flight))
            tick += 1
            last_start[key] = tick
            for _ in range(rng.randrange(4)):
                await asyncio.sleep(0)
            in_flight.discard(key)
            queue.done(key)

    async with asyncio.TaskGroup() as group:
        for _ in range(WORKERS):
            group.create_task(work())
        async with asyncio.TaskGroup() as producers:
            for _ in range(PRODUCERS):
                producers.create_task(produce())
        for _ in range(100_000):  # yield until the workers have caught up
            stats = queue.statistics()
            if stats.depth == 0 and stats.in_flight == 0:
                break
            await asyncio.sleep(0)
        queue.shut_down()

    assert overlaps == []
    assert most_in_flight > 1, "the workers never overlapped, so the test proved nothing"
    lost = [key for key, added in last_add.items() if last_start.get(key, 0) < added]
    assert lost == [], "keys whose last add was never followed by processing"
    assert queue.statistics().adds < PRODUCERS * ADDS_PER_PRODUCER, "duplicates were not merged"
