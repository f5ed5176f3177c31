"""gzip bodies of `metas` answers, compressed once per (catalog content, query) and kept in memory.

Clients resolving an install ask for the same few packages again and again, often many at once;
compressing the same bytes for each of them cost most of a `metas` answer's time. Here each body
is compressed once, in a worker thread, while concurrent requests for it wait for that one result
(single flight), and kept until newer bodies push it out (least recently used first) once the
cache holds `max_bytes`. Keys start with the content hash of the stored catalog, so a new version
of a catalog can never be answered with the old one's bytes; its old entries simply age out.
Bodies whose uncompressed size exceeds `max_body_bytes` are not built in memory at all: the server
streams and compresses them on the fly as before.

Each compression runs in a task of the cache's `Background`, so a requester that goes away does not
cancel it for the others; `aclose` (when the server stops) cancels what is still running.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable

from olm.catalogd.background import Background


class CompressedBodies:
    """An LRU of compressed bodies bounded by their total size, with one compression per key."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.max_body_bytes = max_bytes // 4
        """Largest uncompressed body worth caching (a quarter of the bound, so one answer never
        empties the cache)."""
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._pending: dict[str, asyncio.Task[bytes]] = {}
        self._background = Background("gzip-bodies")

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def size(self) -> int:
        """Bytes held."""
        return self._size

    def cacheable(self, length: int) -> bool:
        """Whether an uncompressed body of `length` bytes goes through the cache."""
        return 0 < length <= self.max_body_bytes

    async def get(self, key: str, compress: Callable[[], bytes]) -> bytes:
        """The body for `key`, running the blocking `compress` in a thread on a miss."""
        body = self._entries.get(key)
        if body is not None:
            self._entries.move_to_end(key)
            return body
        task = self._pending.get(key)
        if task is None:
            # A body whose file went away (the catalog was replaced) fails its waiters, who answer
            # 503; nothing else is expected of a compression.
            task = self._background.spawn(
                asyncio.to_thread(compress), name=f"gzip {key[:12]}", expected=(FileNotFoundError,)
            )
            self._pending[key] = task
            task.add_done_callback(lambda done: self._finished(key, done))
        # A requester that goes away must not cancel the compression the others wait for.
        return await asyncio.shield(task)

    async def aclose(self) -> None:
        """Cancel the compressions still running and wait for them (their threads run to the end
        of their body, unobserved); later `get`s that miss raise `background.Closed`."""
        await self._background.aclose()

    def _finished(self, key: str, task: asyncio.Task[bytes]) -> None:
        self._pending.pop(key, None)
        if task.cancelled():
            return
        if task.exception() is not None:  # the background logged it; the waiters got it
            return
        self._put(key, task.result())

    def _put(self, key: str, body: bytes) -> None:
        if len(body) > self.max_bytes:
            return
        self._entries[key] = body  # never there yet: a key has one compression at a time
        self._size += len(body)
        while self._size > self.max_bytes:
            _, evicted = self._entries.popitem(last=False)
            self._size -= len(evicted)
