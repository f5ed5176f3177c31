"""Start, watch and stop the long-running processes of a local test environment.

Each process is its own session (process group), so stopping it also stops anything it forked, and
its pid is recorded by the caller so another process (`down` from a shell) can stop it later.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1


class ComponentFailure(RuntimeError):
    """A component exited or never became healthy; the message carries the tail of its log."""


def free_ports(count: int) -> list[int]:
    """Ports free on 127.0.0.1 now; the sockets stay open until all are chosen so none repeats."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def port_is_listening(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 16384))
            text = handle.read().decode(errors="replace")
    except FileNotFoundError:
        return "(no log written)"
    return "\n".join(text.splitlines()[-lines:])


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: ask the kernel to SIGTERM it when the parent dies,
    # so a test session killed hard still leaves no component running. The kernel means the parent
    # *thread*: spawned from a worker thread, the child dies when that thread ends.
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def spawn(
    args: Sequence[str], *, log_file: Path, tie_to_parent: bool, env: dict[str, str] | None = None
) -> int:
    """Start `args` in a new session with stdout and stderr appended to `log_file`; return its pid."""
    with log_file.open("ab") as log:
        process = subprocess.Popen(
            list(args),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
            preexec_fn=_die_with_parent if tie_to_parent else None,  # noqa: PLW1509
        )
    return process.pid


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as gone; reap it so it disappears.
    with contextlib.suppress(ChildProcessError):
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def stop(pid: int, *, timeout: float = 15.0) -> None:
    """SIGTERM the process group of `pid`, then SIGKILL it if it outlives `timeout`."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not is_alive(pid):
                return
            time.sleep(0.05)
    raise ComponentFailure(f"process {pid} did not exit after SIGKILL")


def rss_bytes(pid: int) -> int:
    """Resident memory of one process, from /proc (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except FileNotFoundError:
        pass
    return 0


def wait_until(
    condition: Callable[[], bool],
    *,
    timeout: float,
    what: str,
    alive: Callable[[], None] = lambda: None,
    interval: float = 0.1,
) -> None:
    """Poll `condition` until it holds; `alive` raises ComponentFailure as soon as a component dies."""
    deadline = time.monotonic() + timeout
    while True:
        alive()
        with contextlib.suppress(Exception):
            if condition():
                return
        if time.monotonic() > deadline:
            raise ComponentFailure(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)
