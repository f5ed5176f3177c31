"""Structured logging with structlog: JSON in clusters, console locally.

`configure()` is called once by a process's entry point. Controllers bind their context
(`controller`, `object`, `reconcile_id`) once per reconcile with `bound()`, so every line logged
inside carries it, including lines from libraries that use `structlog.get_logger()`. Messages are
constant strings; variables go in key-value pairs.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Any, Literal

import structlog

Format = Literal["json", "console"]


def configure(*, format: Format = "json", level: str = "info") -> None:
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
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
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )


@contextlib.contextmanager
def bound(**context: Any) -> Iterator[None]:
    """Bind `context` to every log line emitted inside the block (task-local via contextvars)."""
    with structlog.contextvars.bound_contextvars(**context):
        yield


def get_logger(name: str) -> Any:
    return structlog.get_logger(name)
