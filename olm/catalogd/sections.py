"""Byte ranges of one file, read in order as one stream, optionally gzip-compressed on the way.

The server reads a response body with it from a worker thread, `size` bytes per call, so a body
is never in memory whole: the ranges come from the index (one per run of consecutive metas) and
are read with `pread`, which keeps no file position and is safe across threads.
"""

from __future__ import annotations

import os
import zlib
from collections import deque
from pathlib import Path


class SectionReader:
    """Read `sections` of the file at `path` in order; `gzip_level` compresses (blocking calls)."""

    def __init__(self, path: Path, sections: list[tuple[int, int]], gzip_level: int | None) -> None:
        self._fd = os.open(path, os.O_RDONLY)
        self._sections = deque(sections)
        self._compressor = zlib.compressobj(gzip_level, zlib.DEFLATED, 31) if gzip_level is not None else None
        self._flushed = False

    def read(self, size: int) -> bytes:
        """About `size` bytes of body (compressed output may be shorter); `b""` at the end."""
        while True:
            data = self._take(size)
            if self._compressor is None:
                return data
            if self._flushed:
                return b""
            out = self._compressor.compress(data) if data else b""
            if not self._sections:
                out += self._compressor.flush()
                self._flushed = True
            if out:
                return out

    def _take(self, size: int) -> bytes:
        parts: list[bytes] = []
        while size > 0 and self._sections:
            offset, length = self._sections[0]
            if length == 0:  # an empty catalog's single, empty section
                self._sections.popleft()
                continue
            piece = os.pread(self._fd, min(length, size), offset)
            if not piece:
                raise OSError("the catalog file is shorter than its index")
            parts.append(piece)
            size -= len(piece)
            if len(piece) == length:
                self._sections.popleft()
            else:
                self._sections[0] = (offset + len(piece), length - len(piece))
        return b"".join(parts)

    def close(self) -> None:
        os.close(self._fd)
