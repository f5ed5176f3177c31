"""Ranges print as text that parses to the same range, and no text breaks the parsers."""

from __future__ import annotations

import contextlib
import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from olm import semver

numbers = st.integers(0, 12).map(str)
parts = st.one_of(numbers, st.sampled_from(["x", "X", "*"]))
prerelease = st.sampled_from(["", "-0", "-rc.1", "-alpha.beta"])
partial = st.builds(
    lambda major, rest, pre: ".".join([major, *rest]) + (pre if len(rest) == 2 and major.isdigit() else ""),
    st.one_of(numbers, parts),
    st.lists(parts, max_size=2),
    prerelease,
)
operators = st.sampled_from(["", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^"])
comparator = st.builds(
    lambda op, version, v: f"{op}{'v' if v else ''}{version}", operators, partial, st.booleans()
)
group = st.one_of(
    st.lists(comparator, min_size=1, max_size=3).flatmap(
        lambda cs: st.sampled_from([" ", ", ", ","]).map(lambda sep: sep.join(cs))
    ),
    st.builds(lambda low, high: f"{low} - {high}", partial, partial),
)
ranges = st.lists(group, min_size=1, max_size=3).map(" || ".join)
versions = st.builds(
    lambda a, b, c, pre: f"{a}.{b}.{c}{pre}", *(st.integers(0, 13) for _ in range(3)), prerelease
)


# Found by atheris: runs of spaces between versions made the grammar's regular expression take
# exponential time to fail (4 s for this text, hours for 57 characters); Go's engine is linear.
WHITESPACE_RUNS = "  12 2    4   12    4     13      4   12 -"


def test_long_runs_of_whitespace_fail_fast() -> None:
    started = time.monotonic()
    with pytest.raises(semver.RangeError, match="improper constraint"):
        semver.parse_range(WHITESPACE_RUNS * 20)
    assert time.monotonic() - started < 0.5


@settings(max_examples=300)
@given(ranges, st.lists(versions, min_size=1, max_size=8))
def test_a_printed_range_parses_to_the_same_range(text: str, probes: list[str]) -> None:
    try:
        parsed = semver.parse_range(text)
    except semver.RangeError:
        return  # some generated texts are not ranges (a partial version with a pre-release)
    printed = semver.parse_range(str(parsed))
    assert str(printed) == str(parsed)
    for version in probes:
        assert printed.matches(version) == parsed.matches(version), (text, str(parsed), version)


@settings(max_examples=500)
@given(
    st.text(max_size=40)
    | st.lists(
        st.sampled_from(["1", ".", "x", "-", " ", "||", ",", ">", "=", "!", "{", "^"]), max_size=16
    ).map("".join)
)
@example("!=4{.x")  # blang's wildcard expansion on a non-number used to raise ValueError
@example(">=1.٣.x")  # a Unicode digit is a digit to str.isdigit, not to strconv.Atoi
@example(WHITESPACE_RUNS)
def test_any_text_is_a_range_or_a_range_error(text: str) -> None:
    for parse in (semver.parse_range, semver.parse_skip_range):
        with contextlib.suppress(semver.RangeError):
            parse(text)
