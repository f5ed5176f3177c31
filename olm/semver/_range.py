"""Version ranges with the semantics of Masterminds/semver v3 constraints (`spec.source.catalog.version`).

Grammar: comparators `= != > < >= => <= =< ~ ~> ^` (none means `=`), wildcards `x X *` in any
position and partial versions (`1.2`), hyphen ranges (`1.2 - 1.4.5`), AND by comma or whitespace,
OR by `||`, an optional `v` prefix. Build metadata never matters. A pre-release version only matches
an OR-group in which at least one comparator names a pre-release (`>=1.2.3-0`), the rule Masterminds
applies; everything else skips pre-releases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from olm.semver._version import Version, VersionError, parse_version

__all__ = ["Range", "RangeError", "parse_range"]

_S = r"[\t\n\f\r ]"
_OPS = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^"
_CV = (
    r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
)
_CONSTRAINT = re.compile(rf"^{_S}*({_OPS}){_S}*({_CV}){_S}*$", re.ASCII)
_HYPHEN = re.compile(rf"{_S}*({_CV}){_S}+-{_S}+({_CV}){_S}*", re.ASCII)
_FIND = re.compile(rf"({_OPS}){_S}*({_CV})", re.ASCII)
_VALID = re.compile(
    rf"^({_S}*({_OPS}){_S}*({_CV}){_S}*)((?:{_S}+|,{_S}*)({_OPS}){_S}*({_CV}){_S}*)*$", re.ASCII
)
_WILDCARDS = frozenset({"x", "X", "*"})
# The grammar only ever asks for "some" or "any" whitespace, so one space may stand for each run.
# Matching the collapsed text keeps `_VALID` linear: over long runs of whitespace, Python's
# backtracking engine (unlike Go's) takes exponential time to fail.
_SPACES = re.compile(rf"{_S}+", re.ASCII)


class RangeError(ValueError):
    """A string is not a valid version range."""


@dataclass(frozen=True, slots=True)
class _Comparator:
    op: str
    orig: str
    con: Version
    dirty: bool = False
    minor_dirty: bool = False
    patch_dirty: bool = False

    def __str__(self) -> str:
        return self.op + self.orig

    def check(self, v: Version) -> bool:
        return _CHECKS[self.op](self, v)


def _tilde(c: _Comparator, v: Version) -> bool:
    if v < c.con:
        return False
    if (c.con.major, c.con.minor, c.con.patch) == (0, 0, 0) and not c.minor_dirty and not c.patch_dirty:
        return True
    if v.major != c.con.major:
        return False
    return v.minor == c.con.minor or c.minor_dirty


def _equal(c: _Comparator, v: Version) -> bool:
    return _tilde(c, v) if c.dirty else v == c.con


def _not_equal(c: _Comparator, v: Version) -> bool:
    if c.dirty:
        if c.con.major != v.major:
            return True
        if c.con.minor != v.minor and not c.minor_dirty:
            return True
        if c.minor_dirty:
            return False
        if c.con.patch != v.patch and not c.patch_dirty:
            return True
        if c.patch_dirty:
            return bool(v.prerelease or c.con.prerelease) and v.prerelease != c.con.prerelease
    return v != c.con


def _greater(c: _Comparator, v: Version) -> bool:
    if not c.dirty:
        return v > c.con
    if v.major != c.con.major:
        return v.major > c.con.major
    if c.minor_dirty:
        return False
    if c.patch_dirty:
        return v.minor > c.con.minor
    return v > c.con


def _less_equal(c: _Comparator, v: Version) -> bool:
    if not c.dirty:
        return v <= c.con
    if v.major > c.con.major:
        return False
    return not (v.major == c.con.major and v.minor > c.con.minor and not c.minor_dirty)


def _caret(c: _Comparator, v: Version) -> bool:
    if v < c.con:
        return False
    if c.con.major > 0 or c.minor_dirty:
        return v.major == c.con.major
    if v.major > 0:
        return False
    if c.con.minor > 0 or c.patch_dirty:
        return v.minor == c.con.minor
    if v.minor > 0:
        return False
    return v.patch == c.con.patch


_CHECKS: dict[str, Callable[[_Comparator, Version], bool]] = {
    "": _equal,
    "=": _equal,
    "!=": _not_equal,
    ">": _greater,
    "<": lambda c, v: v < c.con,
    ">=": lambda c, v: v >= c.con,
    "=>": lambda c, v: v >= c.con,
    "<=": _less_equal,
    "=<": _less_equal,
    "~": _tilde,
    "~>": _tilde,
    "^": _caret,
}


@dataclass(frozen=True, slots=True)
class Range:
    """A parsed version range; `matches` (or `in`) tells whether a version satisfies it."""

    text: str
    _groups: tuple[tuple[_Comparator, ...], ...]

    def matches(self, version: Version | str) -> bool:
        """True when `version` satisfies every comparator of at least one OR-group."""
        if isinstance(version, str):
            version = parse_version(version)
        for group in self._groups:
            if version.prerelease and not any(c.con.prerelease for c in group):
                continue
            if all(c.check(version) for c in group):
                return True
        return False

    def __contains__(self, version: object) -> bool:
        return isinstance(version, Version | str) and self.matches(version)

    def __str__(self) -> str:
        return " || ".join(" ".join(str(c) for c in group) for group in self._groups)


def parse_range(text: str) -> Range:
    """Parse a Masterminds constraint string; raises `RangeError` naming the offending part."""
    rewritten = _rewrite_hyphens(text)
    groups = []
    for segment in rewritten.split("||"):
        if not _VALID.match(_SPACES.sub(" ", segment)):
            raise RangeError(f"improper constraint: {_go_quote(segment)}")
        parts = [m.group(0) for m in _FIND.finditer(segment)] or [segment]
        groups.append(tuple(_parse_comparator(p) for p in parts))
    return Range(text, tuple(groups))


def _rewrite_hyphens(text: str) -> str:
    out = text
    for match in list(_HYPHEN.finditer(text)):
        out = out.replace(match.group(0), f">= {match.group(1)}, <= {match.group(11)} ", 1)
    return out


def _parse_comparator(text: str) -> _Comparator:
    match = _CONSTRAINT.match(text)
    if match is None:
        raise RangeError(f"improper constraint: {_go_quote(text)}")
    op, orig, major, minor, patch, pre = match.group(1, 2, 3, 4, 5, 6)
    pre = pre or ""
    flags = {"dirty": True}
    if major in _WILDCARDS:
        version = f"0.0.0{pre}"
    elif minor is None or minor[1:] in _WILDCARDS:
        flags["minor_dirty"] = True
        version = f"{major}.0.0{pre}"
    elif patch is None or patch[1:] in _WILDCARDS:
        flags["patch_dirty"] = True
        version = f"{major}{minor}.0{pre}"
    else:
        flags = {}
        version = orig
    try:
        con = parse_version(version)
    except VersionError as err:
        raise RangeError(f"improper constraint: {_go_quote(text)}: {err}") from err
    return _Comparator(op, orig, con, **flags)


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
