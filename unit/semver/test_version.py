"""Versions: lenient (Masterminds) and strict (SemVer 2.0.0) parsing; precedence ignores build metadata."""

from __future__ import annotations

import pytest

from olm import semver


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("1.2.3", "1.2.3", id="plain"),
        pytest.param("v1.2.3", "1.2.3", id="v-prefix"),
        pytest.param("1.2", "1.2.0", id="partial-minor"),
        pytest.param("1", "1.0.0", id="partial-major"),
        pytest.param("01.02.03", "1.2.3", id="leading-zeros-coerced"),
        pytest.param("1.31.0-nightly-2026-08-22", "1.31.0-nightly-2026-08-22", id="hyphens-in-prerelease"),
        pytest.param("0.17.2+0.1725901206.p", "0.17.2+0.1725901206.p", id="build-metadata"),
        pytest.param("3.4.0-ea.1", "3.4.0-ea.1", id="prerelease"),
    ],
)
def test_lenient_parse(text: str, expected: str) -> None:
    assert str(semver.parse_version(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("1.2.3.4", id="four-segments"),
        pytest.param("1.2.3-01", id="leading-zero-prerelease"),
        pytest.param("1.2.3-a..b", id="empty-identifier"),
        pytest.param("x.y.z", id="letters"),
    ],
)
def test_lenient_rejects(text: str) -> None:
    with pytest.raises(semver.VersionError):
        semver.parse_version(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("v1.2.3", id="v-prefix"),
        pytest.param("1.2", id="partial"),
        pytest.param("01.2.3", id="leading-zero"),
        pytest.param("1.2.3-", id="empty-prerelease"),
        pytest.param("1.2.3+", id="empty-build"),
    ],
)
def test_strict_rejects_what_lenient_accepts(text: str) -> None:
    with pytest.raises(semver.VersionError):
        semver.parse_version(text, strict=True)


def test_strict_accepts_semver() -> None:
    version = semver.parse_version("1.2.3-rc.1+build.5", strict=True)
    assert (version.major, version.minor, version.patch) == (1, 2, 3)
    assert version.prerelease == ("rc", "1")
    assert version.build == ("build", "5")


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        pytest.param("1.0.0-alpha", "1.0.0-alpha.1", id="shorter-prerelease-first"),
        pytest.param("1.0.0-alpha.1", "1.0.0-alpha.beta", id="numeric-before-alpha"),
        pytest.param("1.0.0-beta.2", "1.0.0-beta.11", id="numeric-compare"),
        pytest.param("1.0.0-rc.1", "1.0.0", id="prerelease-before-release"),
        pytest.param("1.9.0", "1.10.0", id="numeric-minor"),
    ],
)
def test_precedence(lower: str, higher: str) -> None:
    assert semver.parse_version(lower) < semver.parse_version(higher)


def test_build_metadata_never_changes_equality_or_order() -> None:
    a, b = semver.parse_version("1.0.0+a"), semver.parse_version("1.0.0+b")
    assert a == b
    assert hash(a) == hash(b)
    assert not a < b
    assert not b < a
    assert not a.identical(b)
    assert a.identical(semver.parse_version("1.0.0+a"))


def test_semantic_version_interop() -> None:
    assert str(semver.parse_version("1.2.3-rc.1+b").semantic()) == "1.2.3-rc.1"
