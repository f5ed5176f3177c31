"""Structured logging: JSON lines in clusters, context bound per task (olm_runtime/logging.py)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from olm_runtime import logging


@pytest.fixture
def configured(capsys: pytest.CaptureFixture[str]) -> Iterator[pytest.CaptureFixture[str]]:
    """Yields capsys; the test calls `configure` (the writer is bound to the `sys.stderr` of that
    moment, and pytest swaps it between fixture setup and the test). Defaults come back afterwards."""
    try:
        yield capsys
    finally:
        structlog.reset_defaults()
        structlog.contextvars.clear_contextvars()


def configure_json() -> None:
    logging.configure(format="json", level="info")


def json_lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_json_lines_carry_the_event_level_timestamp_and_key_values(
    configured: pytest.CaptureFixture[str],
) -> None:
    configure_json()
    logging.get_logger("olm_runtime.test").info("catalog unpacked", catalog="operatorhub", objects=12)
    (line,) = json_lines(configured)
    assert (line["event"], line["level"], line["catalog"], line["objects"]) == (
        "catalog unpacked",
        "info",
        "operatorhub",
        12,
    )
    assert line["timestamp"].endswith("Z")


def test_lines_below_the_configured_level_are_dropped(configured: pytest.CaptureFixture[str]) -> None:
    configure_json()
    log = logging.get_logger("olm_runtime.test")
    log.debug("noise")
    log.warning("signal")
    assert [line["event"] for line in json_lines(configured)] == ["signal"]


def test_bound_context_reaches_every_line_inside_the_block_even_from_other_loggers(
    configured: pytest.CaptureFixture[str],
) -> None:
    configure_json()
    with logging.bound(controller="catalogd", object="operatorhub", reconcile_id="abc"):
        logging.get_logger("olm_runtime.test").info("inside")
        structlog.get_logger().info("from a library")
    logging.get_logger("olm_runtime.test").info("outside")
    inside, library, outside = json_lines(configured)
    for line in (inside, library):
        assert (line["controller"], line["object"], line["reconcile_id"]) == (
            "catalogd",
            "operatorhub",
            "abc",
        )
    assert "controller" not in outside


async def test_bound_context_is_task_local(configured: pytest.CaptureFixture[str]) -> None:
    configure_json()
    first_bound = asyncio.Event()
    second_logged = asyncio.Event()

    async def first() -> None:
        with logging.bound(reconcile_id="first"):
            first_bound.set()
            await second_logged.wait()
            logging.get_logger("olm_runtime.test").info("first")

    async def second() -> None:
        await first_bound.wait()
        with logging.bound(reconcile_id="second"):
            logging.get_logger("olm_runtime.test").info("second")
        second_logged.set()

    await asyncio.gather(first(), second())
    by_event = {line["event"]: line["reconcile_id"] for line in json_lines(configured)}
    assert by_event == {"first": "first", "second": "second"}


def test_an_exception_is_rendered_into_the_line(configured: pytest.CaptureFixture[str]) -> None:
    configure_json()
    try:
        raise KeyError("spec")
    except KeyError:
        logging.get_logger("olm_runtime.test").exception("reconcile raised an unexpected exception")
    (line,) = json_lines(configured)
    assert "KeyError: 'spec'" in line["exception"]


def test_the_console_format_is_plain_text(configured: pytest.CaptureFixture[str]) -> None:
    logging.configure(format="console", level="info")
    logging.get_logger("olm_runtime.test").info("started", port=8080)
    err = configured.readouterr().err
    assert "started" in err
    assert "port=8080" in err
    assert not err.lstrip().startswith("{")
