"""A gzip file written by a helper thread, so compressing overlaps with parsing.

zlib releases the GIL while it compresses, so feeding it batches from the thread that parses the
catalog lets the two proceed on two cores. Batches are written in order by a single worker; at most
`in_flight` batches wait, which bounds the memory this costs to `batch_bytes * (in_flight + 1)`.
"""

from __future__ import annotations

import contextlib
import gzip
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType


class BackgroundGzip:
    """`write` bytes, then `close` (which waits, flushes and fsyncs); use as a context manager."""

    def __init__(self, path: Path, *, level: int, batch_bytes: int = 1 << 20, in_flight: int = 4) -> None:
        self._raw = path.open("wb")
        self._file = gzip.GzipFile(filename="", fileobj=self._raw, mode="wb", compresslevel=level, mtime=0)
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="catalogd-gzip")
        self._pending: deque[Future[int]] = deque()
        self._buffer = bytearray()
        self._batch = batch_bytes
        self._in_flight = in_flight

    def write(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) >= self._batch:
            self._submit()

    def _submit(self) -> None:
        chunk = bytes(self._buffer)
        self._buffer.clear()
        while len(self._pending) >= self._in_flight:
            self._pending.popleft().result()
        self._pending.append(self._executor.submit(self._file.write, chunk))

    def close(self) -> None:
        try:
            if self._buffer:
                self._submit()
            while self._pending:
                self._pending.popleft().result()
            self._executor.shutdown()
            self._file.close()
            self._raw.flush()
            os.fsync(self._raw.fileno())
        except BaseException:
            self.abort()
            raise
        self._raw.close()

    def abort(self) -> None:
        """Give up on the file. Flushing it may fail again (a full disk fails every write): that
        must neither replace the error the caller is handling nor leave the descriptor open, which
        would keep a deleted file's space in use."""
        self._executor.shutdown(cancel_futures=True)
        with contextlib.suppress(OSError):
            self._file.close()
        with contextlib.suppress(OSError):
            self._raw.close()  # closes the descriptor even when the final flush fails

    def __enter__(self) -> BackgroundGzip:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()
