"""The corpus table in the fuzzing page counts what the corpus holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from unit.hostile import test_bundles, test_catalogs, test_layers

PAGE = Path(__file__).resolve().parents[2] / "docs" / "dev" / "fuzzing.md"


@pytest.mark.parametrize(
    ("category", "cases", "accepted"),
    [
        pytest.param("Catalogs (FBC files)", test_catalogs.CASES, len(test_catalogs.ACCEPTED), id="catalogs"),
        pytest.param("Bundles (registry+v1)", test_bundles.CASES, len(test_bundles.ACCEPTED), id="bundles"),
        pytest.param("Image layers", test_layers.CASES, len(test_layers.ACCEPTED), id="layers"),
    ],
)
def test_the_docs_table_counts_the_cases(category: str, cases: int, accepted: int) -> None:
    row = re.search(rf"^\| {re.escape(category)} \| (\d+) \| (\d+) \| (\d+) \|", PAGE.read_text(), re.M)
    assert row is not None, f"no row for {category} in {PAGE}"
    assert tuple(map(int, row.groups())) == (cases, cases - accepted, accepted)
