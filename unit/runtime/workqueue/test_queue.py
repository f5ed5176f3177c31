"""The deduplicating queue keeps each promise of the package docstring."""

from __future__ import annotations

import asyncio
import threading

import pytest

from olm_runtime import workqueue


async def _take_all(queue: workqueue.Queue[str]) -> list[str]:
    taken = []
    while len(queue):
        item = await queue.get()
        queue.done(item)
        taken.append(item)
    return taken


async def test_distinct_items_are_handed_out_in_the_order_they_were_first_added() -> None:
    queue = workqueue.Queue[str]()
    for item in ["c", "a", "b", "a", "c"]:
        queue.add(item)
    assert await _take_all(queue) == ["c", "a", "b"]


async def test_an_item_added_many_times_before_a_worker_takes_it_is_handed_out_once() -> None:
    queue = workqueue.Queue[str]()
    for _ in range(5):
        queue.add("a")
    assert len(queue) == 1
    assert await queue.get() == "a"
    assert len(queue) == 0
    assert queue.statistics().adds == 1


async def test_an_item_in_flight_is_not_handed_to_a_second_worker() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    assert not second.done()
    queue.done("a")
    assert await second == "a"
    queue.done("a")


async def test_item_readded_while_processing_is_processed_again_after_done() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0
    queue.done("a")
    assert len(queue) == 1
    assert await queue.get() == "a"
    queue.done("a")
    assert len(queue) == 0


async def test_item_readded_while_processing_goes_to_the_back_of_the_queue() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")
    queue.add("b")
    queue.done("a")
    assert await _take_all(queue) == ["b", "a"]


async def test_an_item_done_without_readd_is_not_handed_out_again() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    queue.done(await queue.get())
    assert len(queue) == 0
    assert queue.statistics().depth == 0


async def test_get_waits_until_an_item_is_added() -> None:
    queue = workqueue.Queue[str]()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    assert not getter.done()
    queue.add("a")
    assert await getter == "a"


async def test_waiting_getters_are_served_in_the_order_they_started_waiting() -> None:
    queue = workqueue.Queue[str]()
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await asyncio.sleep(0)
    for item in ["a", "b", "c"]:
        queue.add(item)
    assert [await getter for getter in getters] == ["a", "b", "c"]


async def test_a_getter_cancelled_after_being_woken_passes_the_item_on() -> None:
    queue = workqueue.Queue[str]()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add("a")  # wakes `first` ...
    first.cancel()  # ... which is cancelled before it runs
    assert await second == "a"
    assert first.cancelled()


async def test_a_cancelled_getter_does_not_take_a_later_item() -> None:
    queue = workqueue.Queue[str]()
    getter = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    getter.cancel()
    await asyncio.sleep(0)
    queue.add("a")
    assert await queue.get() == "a"


async def test_done_for_an_item_not_in_flight_is_an_error() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    with pytest.raises(ValueError, match="not in flight"):
        queue.done("a")
    queue.done(await queue.get())
    with pytest.raises(ValueError, match="not in flight"):
        queue.done("a")


async def test_len_counts_only_items_ready_to_hand_out() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    queue.add("b")
    assert await queue.get() == "a"
    queue.add("a")  # marked while in flight: counted in depth, not in len
    assert len(queue) == 1
    stats = queue.statistics()
    assert (stats.depth, stats.ready, stats.in_flight) == (2, 1, 1)


async def test_items_may_be_any_hashable_key() -> None:
    queue = workqueue.Queue[tuple[str, str]]()
    queue.add(("ns", "a"))
    queue.add(("ns", "a"))
    queue.add(("other", "a"))
    assert await queue.get() == ("ns", "a")
    assert await queue.get() == ("other", "a")


async def test_shut_down_wakes_waiting_getters_with_shut_down() -> None:
    queue = workqueue.Queue[str]()
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await asyncio.sleep(0)
    queue.shut_down()
    for getter in getters:
        with pytest.raises(workqueue.ShutDown):
            await getter


async def test_get_after_shut_down_raises_even_with_items_queued() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    queue.shut_down()
    with pytest.raises(workqueue.ShutDown):
        await queue.get()


async def test_adds_after_shut_down_are_ignored() -> None:
    queue = workqueue.Queue[str]()
    queue.shut_down()
    queue.add("a")
    assert len(queue) == 0
    assert queue.statistics().adds == 0


async def test_shutting_down_reports_whether_shut_down_was_called() -> None:
    queue = workqueue.Queue[str]()
    assert not queue.shutting_down
    queue.shut_down()
    queue.shut_down()
    assert queue.shutting_down
    assert queue.statistics().shutting_down


async def test_an_item_in_flight_can_be_done_after_shut_down() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    item = await queue.get()
    queue.shut_down()
    queue.done(item)
    assert queue.statistics().in_flight == 0


async def test_shut_down_with_drain_waits_until_items_in_flight_are_done() -> None:
    queue = workqueue.Queue[str]()
    for item in ["a", "b", "c"]:
        queue.add(item)
    a, b = await queue.get(), await queue.get()
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await asyncio.sleep(0)
    assert queue.shutting_down
    with pytest.raises(workqueue.ShutDown):
        await queue.get()  # "c" stays queued: shutdown hands nothing more out
    queue.done(a)
    await asyncio.sleep(0)
    assert not drain.done()
    queue.done(b)
    await drain


async def test_shut_down_with_drain_returns_at_once_with_nothing_in_flight() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    await queue.shut_down_with_drain()
    assert queue.shutting_down


async def test_shut_down_ends_a_drain_that_is_still_waiting() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    await queue.get()
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await asyncio.sleep(0)
    assert not drain.done()
    queue.shut_down()
    await drain


async def test_a_cancelled_drain_leaves_no_waiter_behind() -> None:
    queue = workqueue.Queue[str]()
    queue.add("a")
    item = await queue.get()
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await asyncio.sleep(0)
    drain.cancel()
    with pytest.raises(asyncio.CancelledError):
        await drain
    queue.done(item)
    assert queue.statistics().in_flight == 0


async def test_statistics_may_be_read_from_another_thread_while_the_queue_works() -> None:
    queue = workqueue.Queue[int]()
    snapshots: list[workqueue.Statistics] = []
    stop = threading.Event()

    def scrape() -> None:
        while not stop.is_set():
            snapshots.append(queue.statistics())

    scraper = threading.Thread(target=scrape)
    scraper.start()
    try:
        for round_ in range(200):
            for item in range(20):
                queue.add(item)
            while len(queue):
                queue.done(await queue.get())
            if round_ % 10 == 0:
                await asyncio.sleep(0)
    finally:
        stop.set()
        await asyncio.to_thread(scraper.join)
    assert snapshots, "the scraper never ran"
    # Each field is read on its own, so only per-field bounds hold across threads.
    assert all(0 <= s.in_flight <= 1 and 0 <= s.ready <= 20 and 0 <= s.depth <= 20 for s in snapshots)
    final = queue.statistics()
    assert (final.depth, final.in_flight, final.adds) == (0, 0, 4000)
