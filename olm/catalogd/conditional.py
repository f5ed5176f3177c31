"""HTTP validators, conditional requests, ranges and content negotiation (RFC 9110), as pure functions."""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime


class Outcome(enum.Enum):
    """What the preconditions of a request decide."""

    PROCEED = "proceed"
    NOT_MODIFIED = "not-modified"
    PRECONDITION_FAILED = "precondition-failed"


def http_date(timestamp: float) -> str:
    return format_datetime(datetime.fromtimestamp(int(timestamp), UTC), usegmt=True)


def _parse_date(value: str) -> float | None:
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):  # a year past 9999 overflows
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


_ETAG = re.compile(r'\s*(W/)?("[^"]*")\s*(?:,|$)')


def _etags(header: str) -> list[tuple[bool, str]] | None:
    """`(weak, opaque-tag)` of an `If-(None-)Match` list; `None` for `*`."""
    if header.strip() == "*":
        return None
    return [(m.group(1) is not None, m.group(2)) for m in _ETAG.finditer(header)]


def evaluate(
    headers: Mapping[str, str], *, etags: tuple[str, ...], last_modified: float, method: str
) -> Outcome:
    """Evaluate `If-Match`, `If-Unmodified-Since`, `If-None-Match`, `If-Modified-Since` in RFC order.

    `etags` are the strong ETags the current representation is known by (for example its identity
    and gzip forms); `If-None-Match` compares weakly, `If-Match` strongly.
    """
    modified = int(last_modified)
    if_match = headers.get("If-Match")
    if if_match is not None:
        listed = _etags(if_match)
        if listed is not None and not any(not weak and tag in etags for weak, tag in listed):
            return Outcome.PRECONDITION_FAILED
    elif (since := headers.get("If-Unmodified-Since")) is not None:
        limit = _parse_date(since)
        if limit is not None and modified > limit:
            return Outcome.PRECONDITION_FAILED
    if_none_match = headers.get("If-None-Match")
    if if_none_match is not None:
        listed = _etags(if_none_match)
        if listed is None or any(tag in etags for _, tag in listed):
            return Outcome.NOT_MODIFIED if method in ("GET", "HEAD") else Outcome.PRECONDITION_FAILED
        return Outcome.PROCEED
    if method in ("GET", "HEAD") and (since := headers.get("If-Modified-Since")) is not None:
        limit = _parse_date(since)
        if limit is not None and modified <= limit:
            return Outcome.NOT_MODIFIED
    return Outcome.PROCEED


@dataclass(frozen=True, slots=True)
class ByteRange:
    start: int
    length: int

    def content_range(self, size: int) -> str:
        return f"bytes {self.start}-{self.start + self.length - 1}/{size}"


class Unsatisfiable(Exception):
    """The `Range` asks for nothing inside the representation (answer 416)."""


_RANGE = re.compile(r"^\s*(\d*)\s*-\s*(\d*)\s*$")


def parse_range(header: str, size: int) -> ByteRange | None:
    """The single byte range of a `Range` header; `None` to ignore it (and send everything).

    Multiple ranges and other units are ignored (RFC 9110 allows that); an unsatisfiable range
    raises `Unsatisfiable`.
    """
    unit, _, spec = header.partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    match = _RANGE.match(spec)
    if match is None or (not match.group(1) and not match.group(2)):
        return None
    first, last = match.group(1), match.group(2)
    if not first:  # suffix: the last N bytes
        length = min(int(last), size)
        if length == 0:
            raise Unsatisfiable
        return ByteRange(size - length, length)
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if last and int(last) < start:
        return None
    if start >= size:
        raise Unsatisfiable
    return ByteRange(start, end - start + 1)


def if_range_allows(header: str | None, *, etag: str, last_modified: float) -> bool:
    """Whether an `If-Range` (absent, a strong ETag, or an exact date) lets the range apply."""
    if header is None:
        return True
    header = header.strip()
    if header.startswith(('"', "W/")):
        return header == etag
    date = _parse_date(header)
    return date is not None and int(date) == int(last_modified)


def accepts_gzip(header: str | None) -> bool:
    """Whether `Accept-Encoding` allows gzip (explicitly or through `*`) with a non-zero q."""
    if not header:
        return False
    verdict: bool | None = None
    star = False
    for item in header.split(","):
        coding, _, params = item.strip().partition(";")
        coding = coding.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if coding in ("gzip", "x-gzip"):
            verdict = q > 0
        elif coding == "*":
            star = q > 0
    return verdict if verdict is not None else star
