"""Fuzz target: version ranges, skipRanges and versions read from arbitrary text.

The first line is a range expression, every further line a version. Promises checked:

- `parse_range` and `parse_skip_range` raise only `RangeError`, `parse_version` only `VersionError`;
- a parsed range prints as text that parses again and matches exactly the same versions;
- a parsed version prints as strict SemVer that parses back to an identical version;
- matching never raises, for the versions in the input and a fixed set of probes.
"""

from __future__ import annotations

from olm import semver

PROBES = tuple(
    semver.parse_version(v)
    for v in ("0.0.0", "0.0.1", "0.1.0", "1.0.0", "1.2.3", "1.2.3-alpha", "1.2.4-0", "2.0.0", "10.20.30+b")
)

SEEDS = (
    b">=1.2.3, <2.0.0 || ^3.1\n1.5.0\n3.2.0-rc.1",
    b"~1.2.x\n1.2.9",
    b"1.2 - 1.4.5\nv1.3",
    b"!=4.x >1.x\n5.0.0",
    b">=1.2.3-0\n1.2.3-alpha.1+build.5",
    b"*\n01.02.03",
)


def one_input(data: bytes) -> None:
    lines = data.decode("utf-8", errors="replace").split("\n")
    versions = [*PROBES, *filter(None, map(_version, lines[1:]))]
    _check_range(lines[0], versions)
    try:
        skip = semver.parse_skip_range(lines[0])
    except semver.RangeError:
        pass
    else:
        for version in versions:
            skip.matches(version)


def _check_range(text: str, versions: list[semver.Version]) -> None:
    try:
        parsed = semver.parse_range(text)
    except semver.RangeError:
        return
    printed = semver.parse_range(str(parsed))
    for version in versions:
        assert parsed.matches(version) == printed.matches(version), (text, str(parsed), str(version))


def _version(text: str) -> semver.Version | None:
    try:
        version = semver.parse_version(text)
    except semver.VersionError:
        return None
    assert semver.parse_version(str(version), strict=True).identical(version), (text, str(version))
    return version
