"""The start both processes share: exit codes and the one line a failed start logs."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from olm import process, processflags, startup, testing_seams


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="test")
    processflags.add_common_flags(parser, lease_name="lease", leader_help="elect")
    return parser


def test_a_run_that_returns_exits_0() -> None:
    ran: list[testing_seams.Seams] = []

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        ran.append(seams)

    assert process.main(_parser(), run, []) == 0
    assert ran == [testing_seams.OFF]


def test_ctrl_c_exits_130() -> None:
    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        raise KeyboardInterrupt

    assert process.main(_parser(), run, []) == process.EXIT_INTERRUPTED == 130


class Recorder:
    """Stands in for the module's logger: the lines as (level, event, fields)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def error(self, event: str, **fields: Any) -> None:
        self.lines.append(("error", event, fields))

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append(("warning", event, fields))


def test_a_startup_error_is_one_error_line_and_exit_code_1(monkeypatch: pytest.MonkeyPatch) -> None:
    log = Recorder()
    monkeypatch.setattr(process, "_log", log)

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        raise startup.APIServerUnreachable(cause="refused", address="https://127.0.0.1:1")

    assert process.main(_parser(), run, []) == startup.EXIT_CODE
    assert log.lines == [
        ("error", "startup.api_server_unreachable", {"address": "https://127.0.0.1:1", "cause": "refused"})
    ]


def test_testing_seams_are_named_in_a_warning_before_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    log = Recorder()
    monkeypatch.setattr(process, "_log", log)
    monkeypatch.setenv(testing_seams.POLL_MINUTE_SECONDS, "0.5")
    ran: list[testing_seams.Seams] = []

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        ran.append(seams)

    assert process.main(_parser(), run, []) == 0
    assert log.lines == [("warning", "testing_seams.enabled", {"poll_minute_seconds": 0.5})]
    assert ran == [testing_seams.Seams(poll_minute_seconds=0.5)]
