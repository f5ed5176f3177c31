"""Waiting for a ClusterExtension, with a progress display on stderr.

On a terminal the display is one line, redrawn in place (elapsed time, `Installed` and `Progressing`
with their reasons, coloured, and the latest message); otherwise, such as when stderr is piped to a
file or CI log, it writes one plain line per condition change, so logs read as a history.

The waits read the cluster once a second: a CLI waits for minutes at most, and a read per second is
cheap for the API server and immune to watch expiry and reconnects.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from olm.api import conditions as api
from olm.api.kinds import CLUSTER_EXTENSION
from olm.cli.commands import CommandFailed
from olm.cli.session import Session
from olm_runtime import conditions
from olm_runtime.client import errors

__all__ = ["Display", "Outcome", "installed_outcome", "poll_until", "wait_installed"]

POLL_SECONDS = 1.0
_WATCHED = (api.TYPE_INSTALLED, api.TYPE_PROGRESSING)
_GREEN, _YELLOW, _RED, _RESET = "\x1b[32m", "\x1b[33m", "\x1b[31m", "\x1b[0m"


def _conditions(obj: Mapping[str, Any] | None) -> Sequence[Mapping[str, Any]]:
    """`status.conditions` of `obj` (none when it is None or has no status yet)."""
    found: Sequence[Mapping[str, Any]] = ((obj or {}).get("status") or {}).get("conditions") or ()
    return found


@dataclass(frozen=True)
class Outcome:
    """`done`: the wait is over; `failure`: it is over because the extension cannot get there."""

    done: bool
    failure: str | None = None


def installed_outcome(obj: Mapping[str, Any] | None, version: str | None) -> Outcome:
    """Whether `obj` has `version` (any version when None) installed and rolled out for its current
    generation, or can no longer get there without a change of spec (Progressing False)."""
    if obj is None:
        return Outcome(done=True, failure="the ClusterExtension was deleted")
    generation = obj["metadata"].get("generation")
    progressing = conditions.find(_conditions(obj), api.TYPE_PROGRESSING) or {}
    current = progressing.get("observedGeneration") == generation
    if current and progressing.get("status") == "False":
        return Outcome(done=True, failure=f"{progressing.get('reason')}: {progressing.get('message')}")
    bundle = ((obj.get("status") or {}).get("install") or {}).get("bundle") or {}
    installed = conditions.is_true(_conditions(obj), api.TYPE_INSTALLED)
    return Outcome(
        done=installed
        and current
        and progressing.get("reason") == api.REASON_SUCCEEDED
        and (version is None or bundle.get("version") == version)
    )


def _colour(reason: str, status: str) -> str:
    if reason == api.REASON_SUCCEEDED:
        return _GREEN
    if status == "False" and reason != api.REASON_ABSENT:
        return _RED
    return _YELLOW


@dataclass
class Display:
    """Shows the conditions of the object being waited on."""

    stream: TextIO
    tty: bool
    started: float = field(default_factory=time.monotonic)
    _seen: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    _line: str = ""

    @classmethod
    def for_stream(cls, stream: TextIO) -> Display:
        return cls(stream=stream, tty=stream.isatty())

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self.started:5.1f}s"

    def show(self, obj: Mapping[str, Any] | None, types: Sequence[str] = _WATCHED) -> None:
        found = {kind: conditions.find(_conditions(obj), kind) or {} for kind in types}
        changed = False
        for kind, cond in found.items():
            key = (str(cond.get("status", "")), str(cond.get("reason", "")), str(cond.get("message", "")))
            if cond and self._seen.get(kind) != key:
                self._seen[kind] = key
                changed = True
                if not self.tty:
                    status, reason, message = key
                    print(f"[{self._elapsed()}] {kind}={status} {reason}: {message}", file=self.stream)
        if self.tty and (changed or self._line):
            self._draw()

    def note(self, text: str) -> None:
        """A line that is not a condition (e.g. what is left to delete)."""
        if self.tty:
            self._line = text
            self._draw()
        else:
            print(f"[{self._elapsed()}] {text}", file=self.stream)

    def _draw(self) -> None:
        width = shutil.get_terminal_size((100, 20)).columns
        parts = [
            f"{_colour(reason, status)}{kind}={status} {reason}{_RESET}"
            for kind, (status, reason, _) in self._seen.items()
        ]
        last = self._line or next((m for _, _, m in reversed(list(self._seen.values())) if m), "")
        visible = len(self._elapsed()) + sum(
            len(k) + len(s) + len(r) + 3 for k, (s, r, _) in self._seen.items()
        )
        room = max(width - visible - 4, 10)
        text = last.replace("\n", " ")
        text = text if len(text) <= room else text[: room - 3] + "..."
        self.stream.write(f"\r\x1b[K{self._elapsed()} {' '.join(parts)}  {text}")
        self.stream.flush()

    def summary(self) -> str:
        """The conditions last shown, on one line."""
        return "; ".join(f"{k}={s} {r}: {m}" for k, (s, r, m) in self._seen.items())

    def tick(self) -> None:
        if self.tty and self._seen:
            self._draw()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


async def poll_until(
    read: Callable[[], Any],
    judge: Callable[[Any], Outcome],
    *,
    observe: Callable[[Any], None],
    display: Display,
    timeout: float,
    what: str,
) -> Any:
    """Read every second, showing each value with `observe`, until `judge` says done; the last
    value. Raises `CommandFailed` when the judge reports a failure or `timeout` seconds pass (naming
    `what` and the last state)."""
    deadline = time.monotonic() + timeout
    try:
        while True:
            value = await read()
            observe(value)
            outcome = judge(value)
            if outcome.done:
                if outcome.failure is not None:
                    raise CommandFailed(f"{what}: {outcome.failure}")
                return value
            if time.monotonic() >= deadline:
                last = display.summary()
                raise CommandFailed(
                    f"timed out after {timeout:g}s waiting for {what}" + (f" ({last})" if last else "")
                )
            await asyncio.sleep(POLL_SECONDS)
            display.tick()
    finally:
        display.close()


async def wait_installed(session: Session, name: str, version: str | None, timeout: int) -> dict[str, Any]:
    """Until ClusterExtension `name` has `version` (any when None) installed and rolled out, showing
    its conditions on stderr; the extension then. `CommandFailed` when it cannot get there."""
    display = Display.for_stream(session.err)

    async def read() -> dict[str, Any] | None:
        try:
            return dict(await session.client.get(CLUSTER_EXTENSION, name))
        except errors.NotFound:
            return None

    def judge(obj: dict[str, Any] | None) -> Outcome:
        return installed_outcome(obj, version)

    found: dict[str, Any] = await poll_until(
        read,
        judge,
        observe=display.show,
        display=display,
        timeout=timeout,
        what=f"clusterextension {name} to install {version or 'its bundle'}",
    )
    return found
