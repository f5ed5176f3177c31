"""skipRange expressions with the semantics of blang/semver v4 `ParseRange`, as OLM reads catalogs.

Catalog authors wrote skipRanges for OLM v0, which evaluates them with blang/semver; OLM v1 keeps
that library for skipRange so graphs keep their meaning. The differences from `Range` matter:
versions must be strict semver, only `x` is a wildcard (`>=2.1.x`), AND is whitespace only, and
pre-releases are ordinary versions (`>=1.0.0 <1.25.1` matches `1.25.0-rc.1`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

from olm.semver._range import RangeError
from olm.semver._version import Version, VersionError, parse_version

__all__ = ["SkipRange", "parse_skip_range"]

_COMPARATORS: dict[str, Callable[[Version, Version], bool]] = {
    "": operator.eq,
    "=": operator.eq,
    "==": operator.eq,
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "!": operator.ne,
    "!=": operator.ne,
}


@dataclass(frozen=True, slots=True)
class SkipRange:
    """A parsed skipRange; `matches` tells whether a version is covered."""

    text: str
    _groups: tuple[tuple[tuple[str, Version], ...], ...]

    def matches(self, version: Version | str) -> bool:
        if isinstance(version, str):
            version = parse_version(version, strict=True)
        return any(all(_COMPARATORS[op](version, v) for op, v in group) for group in self._groups)

    def __contains__(self, version: object) -> bool:
        return isinstance(version, Version | str) and self.matches(version)

    def __str__(self) -> str:
        return self.text


def parse_skip_range(text: str) -> SkipRange:
    """Parse a skipRange; raises `RangeError` with blang's reason when it is malformed."""
    parts = _split_and_trim(text)
    or_parts = _split_or(parts)
    groups = []
    for group in or_parts:
        expanded: list[str] = []
        for part in group:
            expanded.extend(_expand_wildcard(part) if "x" in part else [part])
        groups.append(tuple(_comparator(part) for part in expanded))
    return SkipRange(text, tuple(groups))


def _split_and_trim(text: str) -> list[str]:
    """Split on spaces, except spaces that follow an operator character (`>= 1.0.0`)."""
    result: list[str] = []
    last, last_char = 0, ""
    for i, ch in enumerate(text):
        if ch == " " and last_char not in (">", "<", "="):
            if last < i - 1:
                result.append(text[last:i])
            last = i + 1
        elif ch != " ":
            last_char = ch
    if last < len(text) - 1:
        result.append(text[last:])
    return [part.replace(" ", "") for part in result]


def _split_or(parts: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    last = 0
    for i, part in enumerate(parts):
        if part == "||":
            if i == 0:
                raise RangeError("First element in range is '||'")
            groups.append(parts[last:i])
            last = i + 1
    if last == len(parts):
        raise RangeError("Last element in range is '||'")
    groups.append(parts[last:])
    return groups


def _split_comparator(part: str) -> tuple[str, str]:
    for i, ch in enumerate(part):
        if ch.isdigit():
            return part[:i].strip(), part[i:]
    raise RangeError(f'Could not get version from string: "{part}"')


def _expand_wildcard(part: str) -> list[str]:
    op, version = _split_comparator(part)
    segments = version.split(".")
    wildcard = len(segments) if segments[-1] == "x" else 0  # 2: minor wildcard, 3: patch wildcard
    flat = version.replace(".x.x", ".x", 1).replace(".x", ".0", 1)
    if len(flat.split(".")) == 2:
        flat += ".0"
    increment = {"": True, "=": True, "==": True, "!=": True, "!": True, ">": True, "<=": True}.get(op, False)
    result_op = {">": ">=", ">=": ">=", "<": "<", "<=": "<", "": "<", "=": "<", "==": "<"}.get(op)
    if result_op is None:  # blang leaves unknown operators empty, which then means equality
        result_op = ">=" if op in ("!=", "!") else ""
    prefix = []
    if op in ("", "=", "=="):
        prefix = [">=" + flat]
    elif op in ("!=", "!"):
        prefix = ["<" + flat]
    bound = flat
    if increment:
        bound = _increment(flat, 1 if wildcard == 3 else 0) if wildcard in (2, 3) else ""
    return [*prefix, result_op + bound]


def _increment(version: str, index: int) -> str:
    segments = version.split(".")
    segment = segments[index]
    if not (segment.isascii() and segment.isdigit()):  # blang's strconv.Atoi fails the same way
        raise RangeError(f'strconv.Atoi: parsing "{segment}": invalid syntax')
    segments[index] = str(int(segment) + 1)
    return ".".join(segments)


def _comparator(part: str) -> tuple[str, Version]:
    op, version = _split_comparator(part)
    if op not in _COMPARATORS:
        raise RangeError(f'Could not parse Range "{part}": Could not parse comparator "{op}" in "{part}"')
    try:
        return op, parse_version(version, strict=True)
    except VersionError as err:
        raise RangeError(
            f'Could not parse Range "{part}": Could not parse version "{version}": {err}'
        ) from err
