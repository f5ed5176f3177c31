"""The index answers schema/package/name queries with byte ranges, in file order, merged."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm.catalogd.index import CatalogIndex

# (schema, package, name, line length)
METAS = [
    ("olm.package", "", "a", 10),
    ("olm.channel", "a", "stable", 20),
    ("olm.bundle", "a", "a.v1", 30),
    ("olm.bundle", "a", "a.v2", 40),
    ("olm.package", "", "b", 50),
    ("olm.bundle", "b", "b.v1", 60),
    ("other", "b", "stable", 70),
]


@pytest.fixture
def index() -> CatalogIndex:
    built = CatalogIndex()
    for schema, package, name, length in METAS:
        built.add(length, schema=schema, package=package, name=name)
    return built


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param({}, [(0, 280)], id="everything-is-one-range"),
        pytest.param({"schema": "olm.bundle"}, [(30, 70), (150, 60)], id="schema-merges-neighbours"),
        pytest.param({"package": "a"}, [(10, 90)], id="package"),
        pytest.param({"name": "stable"}, [(10, 20), (210, 70)], id="name-across-schemas"),
        pytest.param({"schema": "olm.bundle", "package": "b"}, [(150, 60)], id="schema-and-package"),
        pytest.param({"schema": "olm.channel", "name": "stable"}, [(10, 20)], id="schema-and-name"),
        pytest.param({"schema": "olm.package", "name": "b"}, [(100, 50)], id="package-object-by-name"),
        pytest.param({"package": "a", "name": "b.v1"}, [], id="no-intersection"),
        pytest.param({"schema": "nope"}, [], id="unknown-value"),
    ],
)
def test_select(index: CatalogIndex, query: dict[str, str], expected: list[tuple[int, int]]) -> None:
    assert index.select(**query) == expected


def test_save_and_load_round_trip(index: CatalogIndex, tmp_path: Path) -> None:
    index.save(tmp_path / "index.json")
    loaded = CatalogIndex.load(tmp_path / "index.json")
    assert len(loaded) == len(index) == 7
    assert loaded.size == 280
    for query in ({"schema": "olm.bundle"}, {"package": "b"}, {"name": "stable", "schema": "other"}):
        assert loaded.select(**query) == index.select(**query)
    assert loaded.values("package") == ["a", "b"]


def test_unknown_format_is_refused(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text('{"version": 99}')
    with pytest.raises(ValueError, match="index format 99"):
        CatalogIndex.load(tmp_path / "index.json")


def test_empty_index_selects_nothing() -> None:
    assert CatalogIndex().select() == []
