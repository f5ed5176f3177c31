"""Reading structured choices out of the fuzzer's flat bytes.

libFuzzer mutates bytes; a target that builds its input (a tarball, a set of files) from those
bytes reaches deep code far sooner than one that hands the raw bytes to a parser, because every
mutation still yields a well-formed archive or file set. Running out of bytes is not an error:
every read then answers zero or empty, so each input decodes to exactly one structured value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class Input:
    """A cursor over the fuzzer's bytes."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._at = 0

    def remaining(self) -> int:
        return len(self._data) - self._at

    def byte(self) -> int:
        if self._at >= len(self._data):
            return 0
        self._at += 1
        return self._data[self._at - 1]

    def number(self, limit: int) -> int:
        """A number in `[0, limit)` from as few bytes as `limit` needs."""
        value, span = 0, 1
        while span < limit:
            value = (value << 8) | self.byte()
            span <<= 8
        return value % limit if limit > 0 else 0

    def choice(self, options: Sequence[T]) -> T:
        return options[self.number(len(options))]

    def chunk(self, limit: int) -> bytes:
        """Up to `limit` bytes, their count read first."""
        size = min(self.number(limit + 1), self.remaining())
        self._at += size
        return self._data[self._at - size : self._at]

    def text(self, limit: int) -> str:
        return self.chunk(limit).decode("utf-8", errors="replace")

    def rest(self) -> bytes:
        data = self._data[self._at :]
        self._at = len(self._data)
        return data
