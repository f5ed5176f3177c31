"""OLM's version, decided by git tags.

A release is a commit tagged `vMAJOR.MINOR.PATCH`, or `vMAJOR.MINOR.PATCH-rc.N` (also `-alpha.N`,
`-beta.N`) for a pre-release. Any other commit builds a snapshot of the next release: the version
checked in to both `pyproject.toml` files, or the newest reachable tag's successor when that is
higher (a patch bump after a release, the next candidate after a pre-release), with the commits
since that tag and the commit itself appended, so snapshots sort after the tag and before the
release they lead to. A checkout with changes not committed (modified or new files) builds a
snapshot marked `dirty`, even on a tagged commit: a release is exactly its commit.

Every artifact carries the same version: both distributions' metadata (PEP 440), the image's
`org.opencontainers.image.version` label (the same string) and the image's tag, which cannot hold
a `+` and so uses the SemVer form (`tag`).

| commit | `python` (wheels, label) | `tag` (image, directory) |
|---|---|---|
| tagged v1.2.0 | 1.2.0 | v1.2.0 |
| tagged v1.3.0-rc.1 | 1.3.0rc1 | v1.3.0-rc.1 |
| 4 after v1.2.0 | 1.2.1.dev4+g0123456789ab | v1.2.1-dev.4.g0123456789ab |
| 4 after v1.3.0-rc.1 | 1.3.0rc2.dev4+g0123456789ab | v1.3.0-rc.2.dev.4.g0123456789ab |
| tagged v1.2.0, changed | 1.2.1.dev0+g0123456789ab.dirty | v1.2.1-dev.0.g0123456789ab.dirty |
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from olm import semver

__all__ = ["Build", "SemVer", "VersionError", "describe", "parse_checked_in", "parse_tag"]

_CORE = r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
_TAG = re.compile(rf"^v{_CORE}(?:-(alpha|beta|rc)\.([1-9]\d*))?$")
_CHECKED_IN = re.compile(rf"^{_CORE}$")
_PEP440_PRE = {"alpha": "a", "beta": "b", "rc": "rc"}
COMMIT_DIGITS = 12
"""Hex digits of the commit in a snapshot's version: enough to stay unique in a long history."""


class VersionError(ValueError):
    """A version, tag or checked-in version that breaks the scheme."""


@dataclass(frozen=True)
class SemVer:
    major: int
    minor: int
    patch: int
    pre: tuple[str, int] | None = None
    """("alpha" | "beta" | "rc", number) for a pre-release."""

    def key(self) -> semver.Version:
        """Sort key: SemVer precedence (a pre-release before its release, alpha < beta < rc)."""
        prerelease = () if self.pre is None else (self.pre[0], str(self.pre[1]))
        return semver.Version(self.major, self.minor, self.patch, prerelease)

    def successor(self) -> SemVer:
        """The version a snapshot after this one leads to."""
        if self.pre is not None:
            return SemVer(self.major, self.minor, self.patch, (self.pre[0], self.pre[1] + 1))
        return SemVer(self.major, self.minor, self.patch + 1)

    @property
    def python(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core if self.pre is None else f"{core}{_PEP440_PRE[self.pre[0]]}{self.pre[1]}"

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core if self.pre is None else f"{core}-{self.pre[0]}.{self.pre[1]}"


def parse_tag(tag: str) -> SemVer | None:
    """The version a release tag names; None for a tag that is not one (such tags are ignored)."""
    match = _TAG.match(tag)
    if match is None:
        return None
    major, minor, patch, kind, number = match.groups()
    pre = (kind, int(number)) if kind else None
    return SemVer(int(major), int(minor), int(patch), pre)


def parse_checked_in(text: str) -> SemVer:
    """The `version` of a pyproject.toml: a plain MAJOR.MINOR.PATCH, the next release."""
    match = _CHECKED_IN.match(text)
    if match is None:
        raise VersionError(f"the checked-in version {text!r} is not MAJOR.MINOR.PATCH")
    major, minor, patch = match.groups()
    return SemVer(int(major), int(minor), int(patch))


@dataclass(frozen=True)
class Build:
    """What one commit builds: a release (`distance` 0 from its tag) or a snapshot."""

    version: SemVer
    commit: str
    distance: int
    """Commits since the newest reachable release tag (or since the first commit); 0 for a release."""
    tagged: bool
    dirty: bool = False
    """Built from a checkout with uncommitted changes (never a release)."""

    @property
    def _local(self) -> str:
        return f"g{self.commit[:COMMIT_DIGITS]}" + (".dirty" if self.dirty else "")

    @property
    def python(self) -> str:
        if self.tagged:
            return self.version.python
        return f"{self.version.python}.dev{self.distance}+{self._local}"

    @property
    def tag(self) -> str:
        if self.tagged:
            return f"v{self.version}"
        separator = "." if self.version.pre is not None else "-"
        return f"v{self.version}{separator}dev.{self.distance}.{self._local}"


def describe(
    *,
    commit: str,
    checked_in: SemVer,
    tags_at_commit: Iterable[str],
    reachable_tags: Iterable[str],
    distance_from: dict[str, int],
    dirty: bool = False,
) -> Build:
    """Decide the build of `commit` (`dirty`: with uncommitted changes). `distance_from` maps each
    reachable tag (and "" for the first commit) to the number of commits since it; the tags at
    `commit` are among the reachable ones."""
    at_commit = sorted((v for v in map(parse_tag, tags_at_commit) if v is not None), key=SemVer.key)
    if at_commit and not dirty:
        # Two release tags on one commit (v1.0.0-rc.2 promoted to v1.0.0): the higher one wins.
        return Build(version=at_commit[-1], commit=commit, distance=0, tagged=True)
    releases = [(version, tag) for tag in reachable_tags if (version := parse_tag(tag)) is not None]
    if not releases:
        return Build(version=checked_in, commit=commit, distance=distance_from[""], tagged=False, dirty=dirty)
    newest, tag = max(releases, key=lambda pair: pair[0].key())
    following = newest.successor()
    version = checked_in if checked_in.key() > following.key() else following
    return Build(version=version, commit=commit, distance=distance_from[tag], tagged=False, dirty=dirty)
