"""Structured logging with structlog: JSON in clusters, text for people at a terminal.

`configure()` is called once by a process's entry point. Controllers bind their context
(`controller`, `kind`, `object`, `reconcile_id`) once per reconcile with `bound()`, so every line
logged inside carries it, including lines from libraries that use `structlog.get_logger()`. Every
line logged inside a recorded tracing span also carries that span's `trace_id` and `span_id` (hex,
as tracing backends show them), so a log line leads to its trace and back. Messages are constant
strings; variables go in key-value pairs.

Formats: `json` (one object per line), `text` (aligned key=value lines for people; `console` is
the same format under its older name).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any, Literal

import structlog
from structlog.typing import EventDict, WrappedLogger

from olm_runtime import tracing

Format = Literal["json", "text", "console"]
FORMATS: tuple[Format, ...] = ("json", "text", "console")


def add_trace_ids(_: WrappedLogger, __: str, event: EventDict) -> EventDict:
    """A structlog processor: the current span's `trace_id` and `span_id`, when there is one."""
    event.update(tracing.log_ids())
    return event


class _Stderr:
    """Whatever `sys.stderr` is when a line is written, not when logging was configured: a caller
    (a test's capture, a CLI wrapper) may replace the stream and close the one it replaced."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure(*, format: Format = "json", level: str = "info") -> None:
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        add_trace_ids,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if format == "json"
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[*processors, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level.upper()]),
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )


@contextlib.contextmanager
def bound(**context: Any) -> Iterator[None]:
    """Bind `context` to every log line emitted inside the block (task-local via contextvars)."""
    with structlog.contextvars.bound_contextvars(**context):
        yield


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
