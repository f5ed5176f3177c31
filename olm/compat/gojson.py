"""JSON bytes exactly as Go's `encoding/json` writes them, for hashes and annotations upstream derives.

Generated RBAC names are `base36(sha224(json))` of a Go value, and the `olm.properties` annotation is
Go-marshalled JSON, so the bytes must match: compact, `<`, `>`, `&`, U+2028 and U+2029 escaped as
`\\u003c`-style sequences, other non-ASCII characters written raw, floats in Go's shortest form.
Mapping keys are written in the order given; pass `sort_keys=True` for Go maps (which Go sorts).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["dumps"]

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def dumps(value: Any, *, sort_keys: bool = False) -> str:
    """Encode like `json.Marshal` (no trailing newline; `json.Encoder.Encode` adds one)."""
    out: list[str] = []
    _encode(value, out, sort_keys)
    return "".join(out)


def _encode(value: Any, out: list[str], sort_keys: bool) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value))
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, dict):
        items = sorted(value.items()) if sort_keys else list(value.items())
        out.append("{")
        for i, (key, item) in enumerate(items):
            if i:
                out.append(",")
            out.append(_string(str(key)))
            out.append(":")
            _encode(item, out, sort_keys)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out, sort_keys)
        out.append("]")
    else:
        raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def _string(text: str) -> str:
    parts = ['"']
    for ch in text:
        escaped = _ESCAPES.get(ch)
        if escaped is not None:
            parts.append(escaped)
        elif ord(ch) < 0x20:
            parts.append(f"\\u{ord(ch):04x}")
        else:
            parts.append(ch)
    parts.append('"')
    return "".join(parts)


def _float(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError(f"unsupported value: {value}")
    if value == 0:
        return "0" if math.copysign(1, value) > 0 else "-0"
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        text = repr(value)
        if "e" in text or "E" in text:  # repr uses exponents from 1e16; Go uses plain digits there
            text = f"{value:f}".rstrip("0").rstrip(".")
        return text[:-2] if text.endswith(".0") else text
    mantissa, _, exponent = repr(value).partition("e")
    sign = exponent[0] if exponent[0] in "+-" else "+"
    digits = exponent.lstrip("+-").lstrip("0") or "0"
    mantissa = mantissa[:-2] if mantissa.endswith(".0") else mantissa
    return f"{mantissa}e{sign}{digits}"
