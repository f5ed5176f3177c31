"""`Background`: the tasks that outlive the call that starts them are referenced until done,
cancelled and awaited when their owner closes, and never fail unseen."""

from __future__ import annotations

import asyncio
import gc

import pytest
import structlog

from olm.catalogd.background import Background, Closed


class Expected(Exception):
    pass


async def test_a_task_nobody_references_still_runs_to_its_end() -> None:
    background = Background("test")
    done = asyncio.Event()

    async def work() -> None:
        await asyncio.sleep(0.01)
        done.set()

    background.spawn(work(), name="unreferenced")
    gc.collect()  # the loop holds tasks weakly: only the background keeps this one alive
    await asyncio.wait_for(done.wait(), 5)
    await asyncio.sleep(0)
    assert len(background) == 0


async def test_close_cancels_and_awaits_every_task_and_refuses_new_ones() -> None:
    background = Background("test")
    started, stopped = asyncio.Event(), asyncio.Event()

    async def forever() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            await asyncio.sleep(0.01)  # cleanup that itself awaits: close waits for it
            stopped.set()

    task = background.spawn(forever(), name="forever")
    await started.wait()
    await background.aclose()
    assert task.cancelled()
    assert stopped.is_set()
    assert len(background) == 0

    async def late() -> None:
        raise AssertionError("must not run")

    with pytest.raises(Closed):
        background.spawn(late(), name="late")


async def test_the_waiter_gets_the_exception_and_the_log_keeps_it() -> None:
    background = Background("test")

    async def broken() -> None:
        raise RuntimeError("a bug")

    with structlog.testing.capture_logs() as logs:
        with pytest.raises(RuntimeError, match="a bug"):
            await background.spawn(broken(), name="broken")
        await asyncio.sleep(0)
    [line] = [entry for entry in logs if entry["event"] == "background.failed"]
    assert line["log_level"] == "error"
    assert line["task"] == "broken"
    assert isinstance(line["exc_info"], RuntimeError)


async def test_an_expected_failure_is_one_line_without_a_traceback() -> None:
    background = Background("test")

    async def refused() -> None:
        raise Expected("not here")

    with structlog.testing.capture_logs() as logs:
        task = background.spawn(refused(), name="refused", expected=(Expected,))
        await asyncio.gather(task, return_exceptions=True)
        await asyncio.sleep(0)
    assert [(e["event"], e["log_level"], e["error"]) for e in logs] == [
        ("background.ended", "info", "not here")
    ]


async def test_a_failure_nobody_awaits_is_logged_not_lost() -> None:
    background = Background("test")
    failed = asyncio.Event()

    async def unawaited() -> None:
        failed.set()
        raise ValueError("nobody listens")

    with structlog.testing.capture_logs() as logs:
        background.spawn(unawaited(), name="unawaited")
        await failed.wait()
        await asyncio.sleep(0.01)
    assert [e["event"] for e in logs] == ["background.failed"]
