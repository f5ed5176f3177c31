"""Versions: Masterminds-style lenient parsing, strict semver parsing, precedence on semantic-version."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import semantic_version  # type: ignore[import-untyped]

__all__ = ["Version", "VersionError", "parse_version"]

_IDENT = r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*"
# The lenient grammar Masterminds' NewVersion accepts: optional "v", missing minor/patch default
# to 0, leading zeros in the numeric segments are coerced away.
_LENIENT = re.compile(
    rf"^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-({_IDENT}))?(?:\+({_IDENT}))?$", re.ASCII
)
_STRICT_CORE = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$", re.ASCII)


class VersionError(ValueError):
    """A string is not a version in the accepted grammar."""


@functools.total_ordering
@dataclass(frozen=True, slots=True, eq=False)
class Version:
    """A semantic version; build metadata is kept but never affects ordering or equality.

    Equality and ordering follow semver precedence, as Masterminds and blang compare versions:
    `1.0.0+a == 1.0.0+b`, `1.0.0-rc.1 < 1.0.0`. Use `identical` to compare build metadata too.
    """

    major: int
    minor: int
    patch: int
    prerelease: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        try:
            self.semantic()
        except ValueError as err:
            raise VersionError(str(err)) from err

    def semantic(self) -> semantic_version.Version:
        """This version as a `semantic_version.Version` without build metadata (its precedence)."""
        return semantic_version.Version(
            major=self.major, minor=self.minor, patch=self.patch, prerelease=self.prerelease
        )

    def identical(self, other: Version) -> bool:
        """Equal including build metadata."""
        return self == other and self.build == other.build

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return (self.major, self.minor, self.patch, self.prerelease) == (
            other.major,
            other.minor,
            other.patch,
            other.prerelease,
        )

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.prerelease))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return bool(self.semantic() < other.semantic())

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Version({str(self)!r})"


def parse_version(text: str, *, strict: bool = False) -> Version:
    """Parse a version.

    `strict=False` accepts what Masterminds' `NewVersion` accepts (the grammar of
    `spec.source.catalog.version`): `v1.2`, `1`, `01.02.03`. `strict=True` accepts only
    SemVer 2.0.0 (`MAJOR.MINOR.PATCH[-PRE][+BUILD]`, no leading zeros), which is what catalogs
    must use for `olm.package` versions and what blang's `Parse` accepts.
    """
    if not text:
        raise VersionError("version string empty")
    if strict:
        return _parse_strict(text)
    match = _LENIENT.match(text)
    if match is None:
        raise VersionError(f"invalid semantic version: {text!r}")
    major, minor, patch, pre, build = match.groups()
    return _build(text, (int(major), int(minor or 0), int(patch or 0)), pre, build)


def _parse_strict(text: str) -> Version:
    core, _, build = text.partition("+")
    core, _, pre = core.partition("-")
    match = _STRICT_CORE.match(core)
    if match is None:
        raise VersionError(
            f"invalid semantic version: {text!r} (want MAJOR.MINOR.PATCH without leading zeros)"
        )
    if ("+" in text and not build) or ("-" in text.partition("+")[0] and not pre):
        raise VersionError(f"invalid semantic version: {text!r} (empty pre-release or build)")
    major, minor, patch = (int(g) for g in match.groups())
    return _build(text, (major, minor, patch), pre or None, build or None)


def _build(text: str, core: tuple[int, int, int], pre: str | None, build: str | None) -> Version:
    major, minor, patch = core
    prerelease = tuple(pre.split(".")) if pre else ()
    metadata = tuple(build.split(".")) if build else ()
    for ident in prerelease:
        if ident.isdigit() and len(ident) > 1 and ident[0] == "0":
            raise VersionError(f"invalid semantic version: {text!r} (version segment starts with 0)")
    for ident in (*prerelease, *metadata):
        if not ident or not re.fullmatch(r"[0-9A-Za-z-]+", ident, re.ASCII):
            raise VersionError(f"invalid semantic version: {text!r} (invalid identifier {ident!r})")
    return Version(major, minor, patch, prerelease, metadata)
