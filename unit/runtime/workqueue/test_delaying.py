"""add_after: items arrive when their delay has passed, earliest deadline first, on a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from olm_runtime import clock, workqueue


def _queue() -> tuple[workqueue.DelayingQueue[str], clock.FakeClock]:
    fake = clock.FakeClock()
    return workqueue.DelayingQueue[str](clock=fake), fake


async def _ready(queue: workqueue.DelayingQueue[str]) -> list[str]:
    items = []
    while len(queue):
        items.append(await queue.get())
    return items


async def test_add_after_adds_the_item_once_its_delay_has_passed() -> None:
    queue, fake = _queue()
    queue.add_after("a", 1.0)
    assert len(queue) == 0
    assert queue.statistics().waiting == 1
    fake.advance(0.999)
    assert len(queue) == 0
    fake.advance(0.001)
    assert await _ready(queue) == ["a"]
    assert queue.statistics().waiting == 0


@pytest.mark.parametrize("delay", [pytest.param(0.0, id="zero"), pytest.param(-1.0, id="negative")])
async def test_add_after_without_a_positive_delay_adds_at_once(delay: float) -> None:
    queue, _ = _queue()
    queue.add_after("a", delay)
    assert await _ready(queue) == ["a"]


async def test_delayed_items_become_ready_in_deadline_order() -> None:
    queue, fake = _queue()
    queue.add_after("c", 3.0)
    queue.add_after("a", 1.0)
    queue.add_after("b", 2.0)
    queue.add("now")
    fake.advance(10.0)
    assert await _ready(queue) == ["now", "a", "b", "c"]


async def test_items_due_at_the_same_time_keep_the_order_of_their_add_after_calls() -> None:
    queue, fake = _queue()
    for item in ["b", "a", "c"]:
        queue.add_after(item, 1.0)
    fake.advance(1.0)
    assert await _ready(queue) == ["b", "a", "c"]


async def test_each_item_arrives_at_its_own_deadline() -> None:
    queue, fake = _queue()
    queue.add_after("a", 1.0)
    queue.add_after("b", 2.0)
    fake.advance(1.5)
    assert await _ready(queue) == ["a"]
    fake.advance(0.5)
    assert await _ready(queue) == ["b"]


@pytest.mark.parametrize(
    ("first", "second"),
    [pytest.param(5.0, 1.0, id="shorter-second"), pytest.param(1.0, 5.0, id="shorter-first")],
)
async def test_the_earliest_deadline_wins_when_an_item_is_delayed_twice(first: float, second: float) -> None:
    queue, fake = _queue()
    queue.add_after("a", first)
    queue.add_after("a", second)
    assert queue.statistics().waiting == 1
    fake.advance(1.0)
    assert await _ready(queue) == ["a"]
    fake.advance(10.0)
    assert len(queue) == 0


async def test_an_item_queued_when_its_delay_passes_is_not_queued_twice() -> None:
    queue, fake = _queue()
    queue.add("a")
    queue.add_after("a", 1.0)
    fake.advance(1.0)
    assert await _ready(queue) == ["a"]


async def test_a_delayed_item_due_while_in_flight_is_processed_again_after_done() -> None:
    queue, fake = _queue()
    queue.add("a")
    item = await queue.get()
    queue.add_after("a", 1.0)
    fake.advance(1.0)
    assert len(queue) == 0
    queue.done(item)
    assert await _ready(queue) == ["a"]


async def test_a_waiting_getter_wakes_when_a_delay_passes() -> None:
    queue, fake = _queue()
    getter = asyncio.create_task(queue.get())
    queue.add_after("a", 2.0)
    await asyncio.sleep(0)
    assert not getter.done()
    fake.advance(2.0)
    assert await getter == "a"


async def test_an_item_can_be_delayed_again_after_it_arrived() -> None:
    queue, fake = _queue()
    queue.add_after("a", 1.0)
    fake.advance(1.0)
    queue.done(await queue.get())
    queue.add_after("a", 1.0)
    fake.advance(0.5)
    assert len(queue) == 0
    fake.advance(0.5)
    assert await _ready(queue) == ["a"]


async def test_the_queue_keeps_a_single_timer_for_its_earliest_deadline() -> None:
    queue, fake = _queue()
    for delay in [5.0, 3.0, 4.0, 1.0, 2.0]:
        queue.add_after(f"item-{delay}", delay)
    assert fake.next_deadline() == 1.0
    fake.advance(1.0)
    assert fake.next_deadline() == 2.0


async def test_shut_down_drops_delayed_items_and_their_timer() -> None:
    queue, fake = _queue()
    queue.add_after("a", 1.0)
    queue.shut_down()
    assert fake.next_deadline() is None
    assert queue.statistics().waiting == 0
    fake.advance(2.0)
    assert len(queue) == 0


async def test_add_after_is_ignored_while_shutting_down() -> None:
    queue, fake = _queue()
    queue.shut_down()
    queue.add_after("a", 1.0)
    queue.add_after("b", 0.0)
    assert fake.next_deadline() is None
    assert queue.statistics().retries == 0


async def test_every_add_after_counts_as_a_retry() -> None:
    queue, _ = _queue()
    queue.add_after("a", 0.0)
    queue.add_after("a", 1.0)
    queue.add_after("a", 2.0)
    assert queue.statistics().retries == 3


async def test_add_after_on_the_real_clock_arrives_after_its_delay() -> None:
    queue = workqueue.DelayingQueue[str]()
    start = queue.clock.now()
    queue.add_after("a", 0.02)
    assert await asyncio.wait_for(queue.get(), timeout=5) == "a"
    assert queue.clock.now() - start >= 0.02


async def test_delays_need_no_background_task() -> None:
    before = asyncio.all_tasks()
    queue, fake = _queue()
    for index, item in enumerate("abc"):
        queue.add_after(item, 1.0 + index)
    assert asyncio.all_tasks() == before, "a delayed add started a task"
    assert queue.statistics().waiting == 3
    fake.advance(3.0)
    assert await _ready(queue) == ["a", "b", "c"]
    queue.shut_down()
    assert fake.next_deadline() is None, "shutdown left a timer behind"
