"""Work that outlives the call that starts it, owned by a supervisor that ends it.

catalogd starts a few kinds of work that must not be tied to the request or reconcile that asked
for it: a catalog's gzip form written after it is stored (`storage`), a catalog a replica fetches
while requests for it wait (`server`), a `metas` body compressed once for every request that wants
it (`gzipcache`). A waiter that goes away must not cancel work others wait for, so that work runs
in a task of its own; a `Background` is what owns those tasks:

- `spawn` starts a task and keeps a reference to it until it is done (the event loop keeps only
  weak ones: a task nobody references can be collected mid-flight);
- `aclose` cancels every task still running and waits for all of them, so nothing of the owner runs
  on after it stopped; later `spawn`s are refused;
- a task's exception goes to whoever awaits the task, and is logged here as well, so that a failure
  nobody was left to receive (every waiter gave up) is never dropped: with its traceback, unless it
  is one of the `expected` exceptions the spawner declared (a failure its waiters report, such as a
  catalog this replica cannot fetch), which is one line.

The owner decides when work ends: `CatalogServer.start` closes its background (catch-ups, gzip
bodies) when the server stops, catalogd's `run` closes the storage's (compressions) when the
process stops. Unlike an `asyncio.TaskGroup`, one task failing neither cancels the others nor the
owner: each task's outcome is its waiters' business.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from olm_runtime.logging import get_logger

__all__ = ["Background", "Closed"]

_log = get_logger("catalogd.background")
T = TypeVar("T")


class Closed(RuntimeError):
    """`spawn` after `aclose`: the owner has stopped."""


class Background:
    """The tasks of one owner (`name` says which in the log); see the module doc."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._tasks: dict[asyncio.Task[Any], tuple[type[BaseException], ...]] = {}
        self._closed = False

    def __len__(self) -> int:
        """Tasks still running."""
        return len(self._tasks)

    @property
    def tasks(self) -> list[asyncio.Task[Any]]:
        """The tasks still running (a copy)."""
        return list(self._tasks)

    def spawn(
        self, work: Coroutine[Any, Any, T], *, name: str, expected: tuple[type[BaseException], ...] = ()
    ) -> asyncio.Task[T]:
        """Run `work` in a task owned here (the caller may await it, or shield it); a failure of one
        of the `expected` exceptions is logged as one line, any other with its traceback. Raises
        `Closed` (and closes `work`) after `aclose`."""
        if self._closed:
            work.close()
            raise Closed(f"{self.name} has stopped")
        task = asyncio.get_running_loop().create_task(work, name=name)
        self._tasks[task] = expected
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        expected = self._tasks.pop(task, ())
        if task.cancelled():
            return
        error = task.exception()  # retrieved, so asyncio does not report it again at collection
        if error is None:
            return
        if isinstance(error, expected):
            _log.info("background.ended", owner=self.name, task=task.get_name(), error=str(error))
        else:
            _log.error("background.failed", owner=self.name, task=task.get_name(), exc_info=error)

    async def aclose(self) -> None:
        """Cancel the tasks still running, wait until all have ended, and refuse new ones."""
        self._closed = True
        while self._tasks:
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
