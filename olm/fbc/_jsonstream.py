"""A stream of JSON objects back to back (compact lines or pretty-printed), read piece by piece.

The reader finds where each top-level object ends by scanning for braces outside strings, hands
that slice to orjson, and drops it from its buffer. Memory follows the largest single object, not
the file; an object larger than `max_object_bytes` is refused rather than buffered.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, Any

import orjson

CHUNK_SIZE = 1 << 20
_STRUCTURE = re.compile(rb'[{}"]')
_STRING_TAIL = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SPACE = re.compile(rb"[ \t\r\n]*")


class JSONStreamError(ValueError):
    """The stream is not a sequence of JSON objects; `line` is where the bad object starts."""

    def __init__(self, line: int, message: str) -> None:
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


def iter_objects(stream: IO[bytes], *, max_object_bytes: int) -> Iterator[tuple[int, Any]]:
    """Yield `(line, value)` for each top-level JSON object in `stream`, line counted from 1."""
    buf = bytearray()
    line = 1  # line number of buf[0]
    eof = False
    start = -1  # offset of the current object's `{` in buf, -1 between objects
    scan = 0  # where scanning resumes
    depth = 0
    while True:
        if start < 0:
            match = _SPACE.match(buf)
            skipped = match.end() if match else 0
            if skipped:
                line += buf.count(b"\n", 0, skipped)
                del buf[:skipped]
            if buf:
                if buf[0] != ord("{"):
                    raise JSONStreamError(line, "expected a JSON object ('{')")
                start, scan, depth = 0, 0, 0
            elif eof:
                return
        if start >= 0 and scan == 0:
            whole = _whole_line(buf, max_object_bytes)
            if whole is not None:
                end, value = whole
                yield line, value
                line += 1
                del buf[: end + 1]
                start = -1
                continue
        if start >= 0:
            end, scan, depth = _scan(buf, scan, depth)
            if end > max_object_bytes:
                raise JSONStreamError(line, f"the object is larger than {max_object_bytes} bytes")
            if end >= 0:
                yield line, _decode(buf[:end], line)
                line += buf.count(b"\n", 0, end)
                del buf[:end]
                start, scan = -1, 0
                continue
            if eof:
                raise JSONStreamError(line, "the object is not closed before the end of the file")
            if len(buf) > max_object_bytes:
                raise JSONStreamError(line, f"the object is larger than {max_object_bytes} bytes")
        chunk = stream.read(CHUNK_SIZE)
        if chunk:
            buf += chunk
        else:
            eof = True


def _whole_line(buf: bytearray, max_object_bytes: int) -> tuple[int, dict[str, Any]] | None:
    """Where the first line of `buf` ends and its object, when that line is exactly one object
    (JSONL, what catalogs mostly are): one orjson call instead of a scan. `None` sends the line to
    the scanner, which then reads it, or reports what is wrong with it, as it always did."""
    end = buf.find(b"\n", 0, max_object_bytes + 1)
    if end < 0:
        return None
    try:
        value = orjson.loads(buf[:end])
    except orjson.JSONDecodeError:
        return None
    return (end, value) if isinstance(value, dict) else None


def _scan(buf: bytearray, pos: int, depth: int) -> tuple[int, int, int]:
    """Continue scanning at `pos` with `depth` open braces; return (end or -1, resume at, depth)."""
    while True:
        match = _STRUCTURE.search(buf, pos)
        if match is None:
            return -1, len(buf), depth
        at = match.start()
        char = buf[at]
        if char == ord('"'):
            tail = _STRING_TAIL.match(buf, at + 1)
            if tail is None:  # the string continues past what is buffered: rescan it later
                return -1, at, depth
            pos = tail.end()
        elif char == ord("{"):
            depth += 1
            pos = at + 1
        else:
            depth -= 1
            pos = at + 1
            if depth == 0:
                return pos, 0, 0


def _decode(data: bytearray, line: int) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise JSONStreamError(line, f"invalid JSON: {error}") from None
