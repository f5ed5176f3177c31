"""Process helpers: free ports, stopping a process group, reporting a log tail."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from olm_runtime.testing import process


def test_free_ports_are_distinct_and_unused() -> None:
    ports = process.free_ports(5)
    assert len(set(ports)) == 5
    assert not any(process.port_is_listening(port) for port in ports)


def test_stop_ends_the_whole_process_group(tmp_path: Path) -> None:
    # The child spawns a grandchild; both must be gone after stop().
    script = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "time.sleep(60)"
    )
    pid = process.spawn([sys.executable, "-c", script], log_file=tmp_path / "log", tie_to_parent=True)
    process.wait_until(lambda: len(_children(pid)) == 1, timeout=10, what="the grandchild to start")
    grandchild = _children(pid)[0]
    process.stop(pid)
    assert not process.is_alive(pid)
    process.wait_until(lambda: not process.is_alive(grandchild), timeout=5, what="the grandchild to exit")


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def test_wait_until_reports_a_dead_component_at_once() -> None:
    def dead() -> None:
        raise process.ComponentFailure("etcd died")

    with pytest.raises(process.ComponentFailure, match="etcd died"):
        process.wait_until(lambda: False, timeout=30, what="never", alive=dead)


def test_log_tail_returns_the_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "c.log"
    log.write_text("".join(f"line {i}\n" for i in range(100)))
    assert process.log_tail(log, lines=2) == "line 98\nline 99"
    assert process.log_tail(tmp_path / "absent.log") == "(no log written)"
