"""Kubernetes resource quantities in canonical form, as `resource.Quantity.String()` prints them.

A Go round trip rewrites `2000m` as `2`, `1024Mi` as `1Gi`, `0.5` as `500m` and `1.5Gi` as `1536Mi`;
rendered Deployments must carry the same strings. Values are exact (`Fraction`); precision finer
than 10^-9 rounds up, as the Go parser does.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = ["canonical"]

_PATTERN = re.compile(r"^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: suffix for suffix, exp in _DECIMAL.items()}
_BINARY_SUFFIX = {exp // 10: suffix for suffix, exp in _BINARY.items()}


def canonical(text: str) -> str:
    """The canonical string of a quantity; raises ValueError for an unparsable one."""
    match = _PATTERN.match(text.strip())
    if match is None or not (match.group(2) or match.group(3)):
        raise ValueError(f"quantities must match the regular expression '{_PATTERN.pattern}'")
    sign, whole, frac, suffix = match.group(1), match.group(2), match.group(3) or "", match.group(4) or ""
    value = Fraction(int(whole or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
    if suffix in _BINARY:
        value *= 2 ** _BINARY[suffix]
        fmt = "binary"
    elif suffix[:1] in ("e", "E"):
        value *= Fraction(10) ** int(suffix[1:])
        fmt = "exponent"
    else:
        value *= Fraction(10) ** _DECIMAL[suffix]
        fmt = "decimal"
    value = Fraction(math.ceil(value * 10**9), 10**9)  # round up to nano precision
    if sign == "-":
        value = -value
    if value == 0:
        return "0"
    if fmt == "binary" and (abs(value) < 1024 or value.denominator != 1):
        fmt = "decimal"
    if fmt == "binary":
        return _binary(value.numerator)
    return _decimal(value, fmt)


def _binary(amount: int) -> str:
    exponent = 0
    while exponent < 6 and amount % 1024 == 0:
        amount //= 1024
        exponent += 1
    return f"{amount}{_BINARY_SUFFIX.get(exponent, '')}"


def _decimal(value: Fraction, fmt: str) -> str:
    mantissa, exponent = value.numerator * (10**9 // value.denominator), -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    shift = exponent % 3
    mantissa *= 10**shift
    exponent -= shift
    if fmt == "decimal" and exponent in _DECIMAL_SUFFIX:
        suffix = _DECIMAL_SUFFIX[exponent]
    else:
        suffix = "" if exponent == 0 else f"e{exponent}"
    return f"{mantissa}{suffix}"
