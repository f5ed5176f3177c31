"""Generated object names: upstream's truncation rule and its base36(sha224(Go JSON)) hash."""

from __future__ import annotations

import hashlib
from typing import Any

from olm.compat import gojson

__all__ = ["deep_hash", "object_name", "unique_name"]

_MAX_NAME = 63
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def object_name(base: str, suffix: str) -> str:
    """`<base>-<suffix>`, the base truncated so the whole name stays within 63 characters."""
    if len(base) + len(suffix) > _MAX_NAME:
        base = base[: _MAX_NAME - len(suffix) - 1]
    return f"{base}-{suffix}"


def deep_hash(value: Any) -> str:
    """base36 of the SHA-224 of `value` encoded as Go's json.Encoder writes it (newline included)."""
    digest = hashlib.sha224((gojson.dumps(value) + "\n").encode("utf-8")).digest()
    number = int.from_bytes(digest, "big")
    out = ""
    while number:
        number, rem = divmod(number, 36)
        out = _DIGITS[rem] + out
    return out or "0"


def unique_name(base: str, value: Any) -> str:
    """The name upstream's DefaultUniqueNameGenerator gives an object derived from `value`."""
    return object_name(base, deep_hash(value))
