"""The version scheme: releases from tags, snapshots between them, in both notations."""

from __future__ import annotations

import pytest
from packaging.version import Version

from olm_testkit.release import version as versions
from olm_testkit.release.version import SemVer

COMMIT = "0123456789abcdef0123456789abcdef01234567"
CHECKED_IN = SemVer(0, 1, 0)


def describe(
    *, at_commit: tuple[str, ...] = (), reachable: dict[str, int] | None = None, dirty: bool = False
) -> versions.Build:
    reachable = reachable or {}
    return versions.describe(
        commit=COMMIT,
        checked_in=CHECKED_IN,
        tags_at_commit=at_commit,
        reachable_tags=list(reachable),
        distance_from={"": 279, **reachable},
        dirty=dirty,
    )


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("v1.2.0", SemVer(1, 2, 0)),
        ("v0.0.1", SemVer(0, 0, 1)),
        ("v1.3.0-rc.1", SemVer(1, 3, 0, ("rc", 1))),
        ("v2.0.0-alpha.3", SemVer(2, 0, 0, ("alpha", 3))),
        ("v2.0.0-beta.12", SemVer(2, 0, 0, ("beta", 12))),
    ],
)
def test_release_tags_parse(tag: str, expected: SemVer) -> None:
    assert versions.parse_tag(tag) == expected
    assert f"v{expected}" == tag


@pytest.mark.parametrize(
    "tag", ["1.2.0", "v1.2", "v01.2.0", "v1.2.0-rc", "v1.2.0-rc.0", "v1.2.0-pre.1", "v1.2.0+build", "latest"]
)
def test_other_tags_are_not_releases(tag: str) -> None:
    assert versions.parse_tag(tag) is None


@pytest.mark.parametrize("text", ["0.1", "0.1.0.dev1", "v0.1.0", "0.1.0rc1", ""])
def test_the_checked_in_version_is_a_plain_release(text: str) -> None:
    with pytest.raises(versions.VersionError, match=r"is not MAJOR\.MINOR\.PATCH"):
        versions.parse_checked_in(text)


@pytest.mark.parametrize(
    ("at_commit", "reachable", "dirty", "python", "tag"),
    [
        # No tag yet: snapshots of the checked-in version, counted from the first commit.
        ((), {}, False, "0.1.0.dev279+g0123456789ab", "v0.1.0-dev.279.g0123456789ab"),
        # A tagged commit is that release.
        (("v1.2.0",), {"v1.2.0": 0}, False, "1.2.0", "v1.2.0"),
        (("v1.3.0-rc.1",), {"v1.3.0-rc.1": 0}, False, "1.3.0rc1", "v1.3.0-rc.1"),
        # A candidate promoted: both tags on one commit, the release wins.
        (("v1.3.0-rc.2", "v1.3.0"), {"v1.3.0-rc.2": 0, "v1.3.0": 0}, False, "1.3.0", "v1.3.0"),
        # After a release: the next patch; after a candidate: the next candidate.
        ((), {"v1.2.0": 4}, False, "1.2.1.dev4+g0123456789ab", "v1.2.1-dev.4.g0123456789ab"),
        ((), {"v1.3.0-rc.1": 4}, False, "1.3.0rc2.dev4+g0123456789ab", "v1.3.0-rc.2.dev.4.g0123456789ab"),
        # The newest reachable tag counts, whatever the order git lists them in.
        ((), {"v0.2.0": 9, "v0.10.0": 2, "v0.9.0": 5}, False, "0.10.1.dev2+g0123456789ab", None),
        # Tags that are not releases are ignored.
        (("nightly",), {"nightly": 0}, False, "0.1.0.dev279+g0123456789ab", None),
        # Uncommitted changes: never the release, even on its tag.
        (
            ("v1.2.0",),
            {"v1.2.0": 0},
            True,
            "1.2.1.dev0+g0123456789ab.dirty",
            "v1.2.1-dev.0.g0123456789ab.dirty",
        ),
    ],
)
def test_each_commit_builds_one_version(
    at_commit: tuple[str, ...], reachable: dict[str, int], dirty: bool, python: str, tag: str | None
) -> None:
    build = describe(at_commit=at_commit, reachable=reachable, dirty=dirty)
    assert build.python == python
    assert str(Version(build.python)) == build.python, "already in PEP 440's normal form"
    if tag is not None:
        assert build.tag == tag


def test_a_checked_in_version_ahead_of_the_tags_is_the_one_snapshots_lead_to() -> None:
    build = versions.describe(
        commit=COMMIT,
        checked_in=SemVer(2, 0, 0),
        tags_at_commit=(),
        reachable_tags=["v1.2.0"],
        distance_from={"": 100, "v1.2.0": 3},
    )
    assert build.python == "2.0.0.dev3+g0123456789ab"


def test_snapshots_sort_after_their_tag_and_before_the_release_they_lead_to() -> None:
    ordered = [
        describe(at_commit=("v1.2.0",), reachable={"v1.2.0": 0}),
        describe(reachable={"v1.2.0": 1}),
        describe(reachable={"v1.2.0": 7}),
        describe(at_commit=("v1.2.1-rc.1",), reachable={"v1.2.1-rc.1": 0}),
        describe(reachable={"v1.2.1-rc.1": 3}),
        describe(at_commit=("v1.2.1",), reachable={"v1.2.1": 0}),
    ]
    python = [Version(build.python) for build in ordered]
    assert python == sorted(python)
    semver = [build.version.key() for build in ordered if build.tagged]
    assert semver == sorted(semver)
    assert SemVer(1, 2, 1, ("rc", 1)).key() < SemVer(1, 2, 1).key()
    assert (
        SemVer(1, 2, 1, ("alpha", 9)).key()
        < SemVer(1, 2, 1, ("beta", 1)).key()
        < SemVer(1, 2, 1, ("rc", 1)).key()
    )
