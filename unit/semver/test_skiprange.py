"""skipRange with blang/semver semantics, and every skipRange of the real community catalogs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from olm import semver

REALDATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "realdata"


@pytest.mark.parametrize(
    ("expr", "matches", "misses"),
    [
        pytest.param(
            ">=1.0.0 <1.25.1", ["1.0.0", "1.25.0", "1.25.1-rc.1"], ["1.25.1", "0.9.9"], id="catalog-form"
        ),
        pytest.param(">=2.1.x <2.2.1", ["2.1.0", "2.2.0"], ["2.2.1", "2.0.9"], id="x-range"),
        pytest.param(">= 1.0.0 < 2.0.0", ["1.5.0"], ["2.0.0"], id="spaces-after-operators"),
        pytest.param("<1.2.x", ["1.1.9"], ["1.2.0"], id="less-than-wildcard"),
        pytest.param("<=1.2.x", ["1.2.9"], ["1.3.0"], id="less-or-equal-wildcard"),
        pytest.param(">1.2.x", ["1.3.0"], ["1.2.9"], id="greater-than-wildcard"),
        pytest.param("1.2.x", ["1.2.0", "1.2.5"], ["1.3.0"], id="bare-wildcard"),
        pytest.param("1.x", ["1.0.0", "1.9.0"], ["2.0.0"], id="major-wildcard"),
        pytest.param("<1.0.0 || >=2.0.0", ["0.5.0", "2.0.0"], ["1.5.0"], id="or"),
        pytest.param("!=1.0.0", ["1.0.1"], ["1.0.0"], id="not-equal"),
        pytest.param(">=1.0.0-0 <1.0.0", ["1.0.0-rc.1"], ["1.0.0"], id="prerelease-ordinary"),
    ],
)
def test_skip_range_table(expr: str, matches: list[str], misses: list[str]) -> None:
    rng = semver.parse_skip_range(expr)
    for version in matches:
        assert rng.matches(version), f"{expr!r} should match {version}"
    for version in misses:
        assert version not in rng, f"{expr!r} should not match {version}"
    assert str(rng) == expr


@pytest.mark.parametrize(
    "expr",
    [
        pytest.param("|| >=1.0.0", id="leading-or"),
        pytest.param(">=1.0.0 ||", id="trailing-or"),
        pytest.param(">=v1.0.0", id="v-prefix-not-strict"),
        pytest.param(">=1.0", id="partial-version"),
        pytest.param("~1.0.0", id="tilde-unsupported"),
        pytest.param("abc", id="no-version"),
    ],
)
def test_skip_range_rejects(expr: str) -> None:
    with pytest.raises(semver.RangeError):
        semver.parse_skip_range(expr)


def _catalog_skip_ranges() -> list[str]:
    found: set[str] = set()
    for path in sorted((REALDATA / "catalogs").rglob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(doc, dict) and doc.get("schema") == "olm.channel":
                found.update(e["skipRange"] for e in doc.get("entries") or [] if e.get("skipRange"))
    return sorted(found)


def test_every_catalog_skip_range_parses() -> None:
    if not REALDATA.is_dir():
        pytest.skip(f"shared real data not found at {REALDATA.resolve()}")
    ranges = _catalog_skip_ranges()
    assert len(ranges) > 10
    for expr in ranges:
        semver.parse_skip_range(expr)
