"""Properties of version ranges that must hold for every version."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from olm import semver

_numbers = st.integers(min_value=0, max_value=30)
_ident = st.one_of(
    st.integers(min_value=0, max_value=50).map(str),
    st.text(alphabet="abcrz-", min_size=1, max_size=4).filter(lambda s: not s.isdigit()),
)
releases = st.builds(semver.Version, _numbers, _numbers, _numbers)
prereleases = st.builds(
    semver.Version, _numbers, _numbers, _numbers, st.lists(_ident, min_size=1, max_size=3).map(tuple)
)
versions = st.one_of(releases, prereleases)
builds = st.lists(st.text(alphabet="abc0123", min_size=1, max_size=4), min_size=1, max_size=2).map(tuple)


@given(releases)
def test_ge_matches_itself(v: semver.Version) -> None:
    assert semver.parse_range(f">={v}").matches(v)
    assert semver.parse_range(f"v{v}").matches(v)


@given(prereleases)
def test_prerelease_matches_a_range_naming_it(v: semver.Version) -> None:
    assert semver.parse_range(f">={v}").matches(v)
    assert semver.parse_range(f"={v}").matches(v)


@given(prereleases, releases)
def test_prerelease_never_matches_a_release_only_range(v: semver.Version, floor: semver.Version) -> None:
    assert not semver.parse_range(f">={floor}").matches(v)
    assert not semver.parse_range("*").matches(v)


@given(versions, versions, versions)
def test_or_is_either(v: semver.Version, a: semver.Version, b: semver.Version) -> None:
    left, right = f">={a}", f"<{b}"
    either = semver.parse_range(f"{left} || {right}").matches(v)
    assert either == (semver.parse_range(left).matches(v) or semver.parse_range(right).matches(v))


@given(releases, releases, releases)
def test_and_is_both(v: semver.Version, a: semver.Version, b: semver.Version) -> None:
    both = semver.parse_range(f">={a}, <{b}").matches(v)
    assert both == (v >= a and v < b)


@given(releases, releases)
def test_caret_bounds(v: semver.Version, c: semver.Version) -> None:
    if c.major > 0:
        upper = semver.Version(c.major + 1, 0, 0)
    elif c.minor > 0:
        upper = semver.Version(0, c.minor + 1, 0)
    else:
        upper = semver.Version(0, 0, c.patch + 1)
    assert semver.parse_range(f"^{c}").matches(v) == (c <= v < upper)


@given(releases, releases)
def test_tilde_bounds(v: semver.Version, c: semver.Version) -> None:
    upper = semver.Version(c.major, c.minor + 1, 0)
    expected = True if c == semver.Version(0, 0, 0) else c <= v < upper  # Masterminds: ~0.0.0 is any
    assert semver.parse_range(f"~{c}").matches(v) == expected


@given(releases, _numbers, _numbers)
def test_wildcards_are_ranges(v: semver.Version, major: int, minor: int) -> None:
    assert semver.parse_range(f"{major}.{minor}.x").matches(v) == (v.major == major and v.minor == minor)
    assert semver.parse_range(f"{major}.x").matches(v) == (v.major == major)
    assert semver.parse_range(f"{major}.{minor}").matches(v) == (v.major == major and v.minor == minor)


@given(releases, releases)
def test_not_equal_is_the_complement_of_equal(v: semver.Version, c: semver.Version) -> None:
    assert semver.parse_range(f"!={c}").matches(v) != semver.parse_range(f"={c}").matches(v)


@given(versions, builds, versions)
def test_build_metadata_is_ignored(v: semver.Version, build: tuple[str, ...], c: semver.Version) -> None:
    with_build = semver.Version(v.major, v.minor, v.patch, v.prerelease, build)
    for expr in (f">={c}", f"<{c}", f"={c}", f"^{c}"):
        rng = semver.parse_range(expr)
        assert rng.matches(with_build) == rng.matches(v)


@given(releases, releases, releases)
def test_hyphen_range_is_inclusive_and(v: semver.Version, a: semver.Version, b: semver.Version) -> None:
    assert semver.parse_range(f"{a} - {b}").matches(v) == (a <= v <= b)


@given(versions, versions)
def test_skip_range_is_plain_ordering(v: semver.Version, floor: semver.Version) -> None:
    assert semver.parse_skip_range(f">={floor}").matches(v) == (v >= floor)


@given(versions)
def test_string_round_trip(v: semver.Version) -> None:
    parsed = semver.parse_version(str(v), strict=True)
    assert parsed == v
    assert parsed.identical(v)
