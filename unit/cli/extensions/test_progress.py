"""Waiting on a ClusterExtension: when it is done, and what the display writes when piped."""

from __future__ import annotations

import io
from typing import Any

from olm.cli.extensions.progress import Display, installed_outcome


def _extension(generation: int, *conditions: tuple[str, str, str, int], version: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {
        "conditions": [
            {"type": t, "status": s, "reason": r, "message": f"{t} {r}", "observedGeneration": g}
            for t, s, r, g in conditions
        ]
    }
    if version:
        status["install"] = {"bundle": {"name": f"x.v{version}", "version": version}}
    return {"metadata": {"name": "x", "generation": generation}, "status": status}


def test_done_when_installed_and_rolled_out_for_the_current_generation() -> None:
    done = _extension(
        2, ("Installed", "True", "Succeeded", 2), ("Progressing", "True", "Succeeded", 2), version="1.0.0"
    )
    assert installed_outcome(done, None).done
    assert installed_outcome(done, "1.0.0").done
    assert not installed_outcome(done, "2.0.0").done


def test_an_older_generation_is_not_done() -> None:
    stale = _extension(
        3, ("Installed", "True", "Succeeded", 2), ("Progressing", "True", "Succeeded", 2), version="1.0.0"
    )
    assert not installed_outcome(stale, None).done


def test_progressing_false_ends_the_wait_with_its_message() -> None:
    blocked = _extension(1, ("Installed", "False", "Failed", 1), ("Progressing", "False", "Blocked", 1))
    outcome = installed_outcome(blocked, None)
    assert outcome.done
    assert outcome.failure == "Blocked: Progressing Blocked"


def test_retrying_keeps_waiting() -> None:
    retrying = _extension(1, ("Installed", "False", "Failed", 1), ("Progressing", "True", "Retrying", 1))
    assert installed_outcome(retrying, None).done is False


def test_a_deleted_extension_ends_the_wait() -> None:
    assert installed_outcome(None, None).failure == "the ClusterExtension was deleted"


def test_piped_output_is_one_plain_line_per_change() -> None:
    stream = io.StringIO()
    display = Display(stream=stream, tty=False)
    first = _extension(1, ("Installed", "False", "Absent", 1), ("Progressing", "True", "RollingOut", 1))
    display.show(first)
    display.show(first)  # unchanged: nothing written
    display.show(
        _extension(1, ("Installed", "True", "Succeeded", 1), ("Progressing", "True", "RollingOut", 1))
    )
    display.close()
    lines = stream.getvalue().splitlines()
    assert [line.split("] ", 1)[1] for line in lines] == [
        "Installed=False Absent: Installed Absent",
        "Progressing=True RollingOut: Progressing RollingOut",
        "Installed=True Succeeded: Installed Succeeded",
    ]
    assert "\x1b" not in stream.getvalue()


def test_a_terminal_gets_one_line_redrawn_in_colour() -> None:
    stream = io.StringIO()
    display = Display(stream=stream, tty=True)
    display.show(
        _extension(1, ("Installed", "True", "Succeeded", 1), ("Progressing", "True", "Succeeded", 1))
    )
    display.close()
    text = stream.getvalue()
    assert text.startswith("\r\x1b[K")
    assert "\x1b[32mInstalled=True Succeeded\x1b[0m" in text
    assert text.endswith("\n")
    assert text.count("\n") == 1
