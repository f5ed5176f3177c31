"""Version ranges: the tables of the version-ranges doc plus Masterminds' edge cases."""

from __future__ import annotations

import pytest

from olm import semver


def _case(expr: str, matches: list[str], misses: list[str], id: str):  # type: ignore[no-untyped-def]
    return pytest.param(expr, matches, misses, id=id)


CASES = [
    # Basic comparisons.
    _case("=1.2.3", ["1.2.3", "v1.2.3", "1.2.3+build.7"], ["1.2.4", "1.2.3-rc.1"], "equal"),
    _case("1.2.3", ["1.2.3"], ["1.2.2"], "bare-version-is-equal"),
    _case("!=1.2.3", ["1.2.2", "2.0.0"], ["1.2.3"], "not-equal"),
    _case(">1.2.3", ["1.2.4", "2.0.0"], ["1.2.3", "1.0.0"], "greater"),
    _case("<1.2.3", ["1.2.2", "0.9.0"], ["1.2.3", "1.3.0"], "less"),
    _case(">=1.2.3", ["1.2.3", "1.9.0"], ["1.2.2"], "greater-or-equal"),
    _case("=>1.2.3", ["1.2.3"], ["1.2.2"], "greater-or-equal-alias"),
    _case("<=1.2.3", ["1.2.3", "1.0.0"], ["1.2.4"], "less-or-equal"),
    _case("=<1.2.3", ["1.2.3"], ["1.2.4"], "less-or-equal-alias"),
    # Range comparisons: comma or space is AND.
    _case(">=3.0, <3.6", ["3.0.0", "3.5.99"], ["3.6.0", "2.9.9"], "doc-range-comma"),
    _case(">=3.0 <3.6", ["3.5.0"], ["3.6.0"], "range-space"),
    _case(
        ">= 1.2, < 3.0.0 || >= 4.2.3", ["1.2.0", "2.9.9", "4.2.3", "5.0.0"], ["3.0.0", "4.2.2"], "or-groups"
    ),
    _case("1.2 - 1.4.5", ["1.2.0", "1.4.5"], ["1.4.6", "1.1.9"], "hyphen-range"),
    # Wildcards (doc table).
    _case("1.2.x", ["1.2.0", "1.2.99"], ["1.3.0", "1.1.9"], "doc-wildcard-patch"),
    _case(">= 1.2.x", ["1.2.0", "3.0.0"], ["1.1.9"], "doc-wildcard-ge"),
    _case("<= 2.x", ["2.99.99", "1.0.0"], ["3.0.0"], "doc-wildcard-le-major"),
    _case("*", ["0.0.0", "1.0.0", "99.0.0"], ["1.0.0-alpha"], "doc-star"),
    _case("1.2.X", ["1.2.5"], ["1.3.0"], "wildcard-capital-x"),
    _case("1.2.*", ["1.2.5"], ["1.3.0"], "wildcard-star"),
    _case("1.2", ["1.2.0", "1.2.9"], ["1.3.0"], "partial-version-is-wildcard"),
    _case("1", ["1.0.0", "1.9.9"], ["2.0.0", "0.9.9"], "major-only"),
    _case("!=4.x", ["3.9.9", "5.0.0"], ["4.0.0", "4.9.9"], "not-equal-wildcard"),
    _case(">1.x", ["2.0.0"], ["1.9.9"], "greater-than-major-wildcard"),
    _case(">1.2.x", ["1.3.0"], ["1.2.9"], "greater-than-minor-wildcard"),
    # Tilde (doc table).
    _case("~1.2.3", ["1.2.3", "1.2.99"], ["1.3.0", "1.2.2"], "doc-tilde-patch"),
    _case("~1", ["1.0.0", "1.99.0"], ["2.0.0"], "doc-tilde-major"),
    _case("~2.3", ["2.3.0", "2.3.9"], ["2.4.0"], "doc-tilde-minor"),
    _case("~1.2.x", ["1.2.0"], ["1.3.0"], "doc-tilde-wildcard-patch"),
    _case("~1.x", ["1.0.0", "1.9.0"], ["2.0.0"], "doc-tilde-wildcard-minor"),
    _case("~>1.2.3", ["1.2.5"], ["1.3.0"], "tilde-arrow"),
    _case("~0.0.0", ["0.0.0", "5.0.0"], [], "tilde-zero-is-any"),
    # Caret (doc table, 0.x rules).
    _case("^1.2.3", ["1.2.3", "1.99.0"], ["2.0.0", "1.2.2"], "doc-caret"),
    _case("^1.2.x", ["1.2.0", "1.9.0"], ["2.0.0"], "doc-caret-wildcard"),
    _case("^2.3", ["2.3.0", "2.9.0"], ["3.0.0", "2.2.9"], "doc-caret-minor"),
    _case("^2.x", ["2.0.0", "2.9.9"], ["3.0.0"], "doc-caret-major-wildcard"),
    _case("^0.2.3", ["0.2.3", "0.2.9"], ["0.3.0", "0.2.2"], "doc-caret-zero-minor"),
    _case("^0.2", ["0.2.0", "0.2.9"], ["0.3.0"], "doc-caret-zero-minor-partial"),
    _case("^0.0.3", ["0.0.3"], ["0.0.4", "0.0.2"], "doc-caret-zero-patch"),
    _case("^0.0", ["0.0.0", "0.0.9"], ["0.1.0"], "doc-caret-zero-zero"),
    _case("^0", ["0.0.0", "0.9.9"], ["1.0.0"], "doc-caret-zero"),
    # v prefix and build metadata.
    _case("v1.2.3", ["1.2.3"], ["1.2.4"], "v-prefix"),
    _case(">=v1.0.0 <v2", ["1.5.0"], ["2.0.0"], "v-prefix-range"),
    _case("1.2.3+build.1", ["1.2.3", "1.2.3+other"], [], "build-metadata-ignored"),
    _case(">=0.17.2 <0.18.0", ["0.17.2+0.1725901206.p"], [], "build-metadata-in-version"),
    # Pre-releases only match groups that name one.
    _case(">=1.2.3", ["1.2.3"], ["1.2.4-rc.1", "1.31.0-nightly-2026-08-22"], "prerelease-skipped"),
    _case(">=1.2.3-0", ["1.2.3-alpha", "1.2.4-rc.1", "1.3.0"], ["1.2.2"], "prerelease-named"),
    _case(">=3.4.0-ea.1 <3.5.0", ["3.4.0-ea.1", "3.4.0", "3.4.1-ea.2"], ["3.4.0-ea.0"], "prerelease-group"),
    _case(">=1.0.0-0 || >=2.0.0", ["1.0.0-rc", "2.1.0-rc"], ["0.9.0"], "prerelease-via-first-group"),
    _case(">=2.0.0 || <1.0.0-0", ["3.0.0", "0.5.0-beta"], ["2.1.0-beta"], "prerelease-group-independent"),
    _case("=1.2.3-beta", ["1.2.3-beta"], ["1.2.3", "1.2.3-alpha"], "prerelease-equal"),
    _case("~1.2.3-beta", ["1.2.3-beta.2", "1.2.5"], ["1.3.0"], "prerelease-tilde"),
    _case("^1.2.3-beta", ["1.2.3-beta.2", "1.9.9"], ["2.0.0"], "prerelease-caret"),
]


@pytest.mark.parametrize(("expr", "matches", "misses"), CASES)
def test_range_table(expr: str, matches: list[str], misses: list[str]) -> None:
    rng = semver.parse_range(expr)
    for version in matches:
        assert rng.matches(version), f"{expr!r} should match {version}"
        assert version in rng
    for version in misses:
        assert not rng.matches(version), f"{expr!r} should not match {version}"


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        pytest.param("", 'improper constraint: ""', id="empty"),
        pytest.param("foo", 'improper constraint: "foo"', id="word"),
        pytest.param(">=1.0.0 ||", 'improper constraint: ""', id="dangling-or"),
        pytest.param(">>1", 'improper constraint: ">>1"', id="double-operator"),
        pytest.param("1.2.3.4", 'improper constraint: "1.2.3.4"', id="four-segments"),
        pytest.param(">=1.0.0-01", "version segment starts with 0", id="leading-zero-prerelease"),
    ],
)
def test_parse_errors_name_the_offending_part(expr: str, message: str) -> None:
    with pytest.raises(semver.RangeError, match=message.replace("(", r"\(").replace("|", r"\|")):
        semver.parse_range(expr)


def test_range_error_is_a_value_error() -> None:
    assert issubclass(semver.RangeError, ValueError)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        pytest.param(">=3.0, <3.6", ">=3.0 <3.6", id="comma-becomes-space"),
        pytest.param("1.2 - 1.4.5", ">=1.2 <=1.4.5", id="hyphen-rewritten"),
        pytest.param("^1 || ~2.3", "^1 || ~2.3", id="or"),
    ],
)
def test_string_form(expr: str, text: str) -> None:
    rng = semver.parse_range(expr)
    assert str(rng) == text
    assert rng.text == expr


def test_matches_accepts_parsed_versions() -> None:
    assert semver.parse_range("^1").matches(semver.parse_version("1.4.0"))
    assert 42 not in semver.parse_range("*")
