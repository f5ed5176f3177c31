"""A reference table of Masterminds/semver v3 constraint semantics: (constraint, version, matches).

Rows are written from Masterminds' documented behaviour (its README's operator tables, x-ranges,
hyphen ranges, `||` and comma AND, and the pre-release rule: a pre-release only matches an
OR-group that names one), not from this package's code. Each row is checked on the parsed range
and again on the range its printed form parses to, so printing never changes a meaning.
"""

from __future__ import annotations

import pytest

from olm import semver

ROWS: list[tuple[str, str, bool]] = [
    # Plain comparisons; build metadata never matters.
    ("=1.2.3", "1.2.3+any.build", True),
    (">1.2.3", "1.2.3+later", False),
    (">1.2.3", "1.2.4", True),
    ("<1.2.3", "1.2.2", True),
    ("<1.2.3", "1.2.3", False),
    (">=1.2.3", "1.2.3", True),
    ("<=1.2.3", "1.2.4", False),
    ("!=1.2.3", "1.2.4", True),
    ("!=1.2.3", "1.2.3+b", False),
    # Partial versions are x-ranges, whichever the operator.
    ("=1.2", "1.2.7", True),
    ("=1.2", "1.3.0", False),
    (">1.2", "1.2.9", False),
    (">1.2", "1.3.0", True),
    (">1", "1.99.99", False),
    (">1", "2.0.0", True),
    ("<1.2", "1.1.99", True),
    ("<1.2", "1.2.0", False),
    ("<=1.2", "1.2.99", True),
    ("<=1.2", "1.3.0", False),
    ("!=1.2", "1.2.5", False),
    ("!=1.2", "1.3.0", True),
    ("1.x", "1.99.0", True),
    ("1.x", "2.0.0", False),
    ("x", "42.0.0", True),
    ("X", "0.0.0", True),
    ("1.*.*", "1.5.5", True),
    # Hyphen ranges are inclusive; a partial upper end covers its x-range.
    ("1.2.3 - 2.3.4", "2.3.4", True),
    ("1.2.3 - 2.3.4", "2.3.5", False),
    ("1.2.3 - 2.3.4", "1.2.2", False),
    ("2.3.4 - 4.5", "4.5.9", True),
    ("2.3.4 - 4.5", "4.6.0", False),
    # Tilde: patch-level changes when a minor is given, minor-level otherwise.
    ("~1.2.3", "1.2.9", True),
    ("~1.2.3", "1.3.0", False),
    ("~1.2", "1.2.0", True),
    ("~1.2", "1.3.0", False),
    ("~1", "1.9.0", True),
    ("~1", "2.0.0", False),
    ("~>2.1", "2.1.5", True),
    # Caret: up to the next non-zero leftmost part.
    ("^1.2.3", "1.9.9", True),
    ("^1.2.3", "2.0.0", False),
    ("^1.2.3", "1.2.2", False),
    ("^0.2.3", "0.2.9", True),
    ("^0.2.3", "0.3.0", False),
    ("^0.0.3", "0.0.3", True),
    ("^0.0.3", "0.0.4", False),
    ("^0.0", "0.0.9", True),
    ("^0.0", "0.1.0", False),
    ("^0", "0.9.9", True),
    ("^0", "1.0.0", False),
    ("^0.0.0", "0.0.0", True),
    ("^0.0.0", "0.0.1", False),
    # AND by comma or whitespace, OR by `||`.
    (">1.0,<2.0", "1.5.0", True),
    (">1.0,<2.0", "2.0.0", False),
    (">=1.0.0 <1.1.0 || >=2.0.0", "1.0.5", True),
    (">=1.0.0 <1.1.0 || >=2.0.0", "1.5.0", False),
    (">=1.0.0 <1.1.0 || >=2.0.0", "3.0.0", True),
    ("^1 || ^3", "2.0.0", False),
    ("^1 || ^3", "3.1.0", True),
    ("  ^1.2  ", "1.4.0", True),
    # Pre-releases are excluded unless their OR-group names one.
    ("<1.2.3", "1.2.3-beta", False),
    ("<=1.2.3", "1.2.3-beta", False),
    ("!=1.2.3", "1.2.3-beta", False),
    ("*", "1.0.0-rc.1", False),
    ("1.x", "1.0.0-beta", False),
    ("^1.2.3", "1.5.0-alpha", False),
    (">=1.2.3-alpha", "1.2.3-beta", True),
    (">=1.2.3-alpha", "1.2.4-alpha", True),
    (">=1.2.3-alpha", "1.2.3-1", False),
    ("<1.2.3-0", "1.2.2", True),
    ("<1.2.3-0", "1.2.3-beta", False),
    ("~1.2.3-beta", "1.2.4-alpha", True),
    ("~1.2.3-beta", "1.3.0-alpha", False),
    ("^1.2.3-beta.2", "1.2.3-beta.11", True),
    ("^1.2.3-beta.2", "1.2.3-beta.1", False),
    ("1.0.0-alpha - 2.0.0", "1.5.0-beta", True),
    (">=1.0.0-0 <2.0.0 || >=3.0.0", "3.1.0-rc.1", False),
    (">=1.0.0-0 <2.0.0 || >=3.0.0", "1.9.0-rc.1", True),
    # Pre-release precedence: numeric identifiers sort before alphanumeric ones, shorter first.
    (">1.0.0-alpha", "1.0.0-alpha.1", True),
    (">1.0.0-alpha.1", "1.0.0-alpha.beta", True),
    (">1.0.0-beta.2", "1.0.0-beta.11", True),
    ("<1.0.0-rc.1", "1.0.0-beta.11", True),
    (">=1.0.0-rc.1", "1.0.0", True),
    # Lenient versions in constraints: a `v` prefix, leading zeros coerced.
    ("v1.2.3", "1.2.3", True),
    ("=01.02.03", "1.2.3", True),
    (">=v2", "2.0.0", True),
]

INVALID = [
    "",
    "  ",
    "==1.2.3",
    ">>1",
    "V1.2.3",
    "1.2.3.4",
    "~>",
    "1.2.3 -",
    "1.2.3 || ",
    "||1.2.3",
    "abc",
    "^",
]


@pytest.mark.parametrize(
    ("constraint", "version", "expected"), [pytest.param(c, v, e, id=f"{c}|{v}") for c, v, e in ROWS]
)
def test_masterminds_semantics(constraint: str, version: str, expected: bool) -> None:
    parsed = semver.parse_range(constraint)
    assert parsed.matches(version) is expected
    assert semver.parse_range(str(parsed)).matches(version) is expected, str(parsed)


@pytest.mark.parametrize("constraint", [pytest.param(c, id=repr(c)) for c in INVALID])
def test_masterminds_rejects(constraint: str) -> None:
    with pytest.raises(semver.RangeError, match="improper constraint"):
        semver.parse_range(constraint)
