"""Structured logging: JSON lines in clusters, context bound per task (olm_runtime/logging.py)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import structlog
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from olm_runtime import logging, tracing
from unit.runtime.controller.conftest import span_exporter

__all__ = ["span_exporter"]


@pytest.fixture
def configured(capsys: pytest.CaptureFixture[str]) -> Iterator[pytest.CaptureFixture[str]]:
    """Yields capsys; the test calls `configure`. Defaults come back afterwards."""
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


@pytest.mark.parametrize("name", ["text", "console"])  # `console` is the older name of `text`
def test_the_text_format_is_plain_text(configured: pytest.CaptureFixture[str], name: logging.Format) -> None:
    logging.configure(format=name, level="info")
    logging.get_logger("olm_runtime.test").info("started", port=8080)
    err = configured.readouterr().err
    assert "started" in err
    assert "port=8080" in err
    assert not err.lstrip().startswith("{")


def test_lines_inside_a_span_carry_its_trace_and_span_ids(
    configured: pytest.CaptureFixture[str], span_exporter: InMemorySpanExporter
) -> None:
    configure_json()
    log = logging.get_logger("olm_runtime.test")
    log.info("before")
    with tracing.span("unit/outer") as outer:
        log.info("in outer")
        with tracing.span("unit/inner") as inner:
            structlog.get_logger().info("in inner, from a library")
    before, in_outer, in_inner = json_lines(configured)
    assert "trace_id" not in before
    assert "span_id" not in before
    trace_id = format(outer.get_span_context().trace_id, "032x")
    assert (in_outer["trace_id"], in_outer["span_id"]) == (
        trace_id,
        format(outer.get_span_context().span_id, "016x"),
    )
    assert (in_inner["trace_id"], in_inner["span_id"]) == (
        trace_id,
        format(inner.get_span_context().span_id, "016x"),
    )


def test_lines_go_to_the_stderr_of_the_moment_they_are_written(
    configured: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stream swapped in after `configure` (and closed later by whoever swapped it) is never
    written to once it is gone."""
    configure_json()
    replaced = io.StringIO()
    monkeypatch.setattr(sys, "stderr", replaced)
    structlog.get_logger("swap").info("while replaced")
    monkeypatch.undo()
    assert json.loads(replaced.getvalue())["event"] == "while replaced"
    replaced.close()
    structlog.get_logger("swap").info("after")
    assert [line["event"] for line in json_lines(configured)] == ["after"]
