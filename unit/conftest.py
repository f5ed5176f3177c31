"""Unit-test configuration: Hypothesis profiles, and logging left as each test found it.

In CI (`CI` set) property tests run derandomized, so a run fails or passes the same way every
time and a failure seen there reproduces locally with `HYPOTHESIS_PROFILE=ci`. Deadlines are off
everywhere: the machines are shared and a slow example is not a failing one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import structlog
from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """structlog's configuration is process-wide: a test that runs a process's `main()` configures
    it (olmctl filters below warnings), and without this a later test's `capture_logs()` saw nothing
    of what its code logged at info. The list is copied because `capture_logs` edits it in place."""
    saved = structlog.get_config()
    saved["processors"] = list(saved["processors"])
    try:
        yield
    finally:
        structlog.configure(**saved)
        structlog.contextvars.clear_contextvars()
