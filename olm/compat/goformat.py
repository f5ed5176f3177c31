"""Go's fmt verbs as crdify uses them in messages: %q for strings, %v for numbers and string slices."""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal

__all__ = ["go_list", "go_quote", "go_value"]


def go_quote(text: str) -> str:
    """strconv.Quote: double-quoted, Go escapes, printable Unicode kept."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not ch.isprintable() and code > 0x7F:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_value(value: float | int) -> str:
    """%v of an int64 or float64: floats as %g with the shortest digits (exponent form below 1e-4 and
    from 1e+06 on, as Go prints `1e+06`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "0"
    number = Decimal(repr(value)).normalize()
    sign, digits, _ = number.as_tuple()
    exponent = number.adjusted()
    if exponent < -4 or exponent >= 6:
        text = "".join(str(d) for d in digits)
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{'-' if sign else ''}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"
    return format(number, "f")


def go_list(items: Sequence[str]) -> str:
    """%v of a []string: `[a b c]`."""
    return "[" + " ".join(items) + "]"
