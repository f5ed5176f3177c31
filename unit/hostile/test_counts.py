"""The corpus table in the fuzzing page counts what the corpus holds.

The e2e corpus modules are imported for their case tables only; importing them needs no cluster.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from e2e.api import test_hostile_specs
from e2e.catalogd import test_hostile_catalogs, test_hostile_http
from e2e.oci import test_hostile_images
from unit.hostile import test_bundles, test_catalogs, test_layers

PAGE = Path(__file__).resolve().parents[2] / "docs" / "dev" / "fuzzing.md"
ROW = re.compile(r"^\| (\*\*total\*\*|[^|*]+?) \| (\d+) \| (\d+) \| (\d+) \|", re.M)
MINIMUM_TOTAL = 150
"""What issue #12 asks of the corpus."""


def _rows() -> dict[str, tuple[int, int, int]]:
    return {m[1]: (int(m[2]), int(m[3]), int(m[4])) for m in ROW.finditer(PAGE.read_text())}


@pytest.mark.parametrize(
    ("category", "cases", "accepted"),
    [
        pytest.param(
            "Catalogs (FBC files)",
            test_catalogs.CASES,
            len(test_catalogs.ACCEPTED) + len(test_catalogs.UPSTREAM_SERVES),
            id="catalogs",
        ),
        pytest.param("Bundles (registry+v1)", test_bundles.CASES, len(test_bundles.ACCEPTED), id="bundles"),
        pytest.param("Image layers", test_layers.CASES, len(test_layers.ACCEPTED), id="layers"),
        pytest.param(
            "ClusterExtension specs",
            len(test_hostile_specs.EXTENSION_CASES),
            len(test_hostile_specs.EXTENSION_ACCEPTED),
            id="extension-specs",
        ),
        pytest.param(
            "ClusterCatalog specs",
            len(test_hostile_specs.CATALOG_CASES),
            len(test_hostile_specs.CATALOG_ACCEPTED),
            id="catalog-specs",
        ),
        pytest.param(
            "Catalog images (real registry)",
            test_hostile_images.CASES,
            len(test_hostile_images.ACCEPTED),
            id="images",
        ),
        pytest.param(
            "ClusterCatalogs judged by catalogd",
            test_hostile_catalogs.CASES,
            len(test_hostile_catalogs.ACCEPTED),
            id="catalogd",
        ),
        pytest.param(
            "HTTP requests to catalogd",
            test_hostile_http.CASES,
            len(test_hostile_http.ACCEPTED),
            id="catalogd-http",
        ),
    ],
)
def test_the_docs_table_counts_the_cases(category: str, cases: int, accepted: int) -> None:
    row = _rows().get(category)
    assert row is not None, f"no row for {category} in {PAGE}"
    assert row == (cases, cases - accepted, accepted)


def test_the_total_line_adds_up() -> None:
    rows = _rows()
    total = rows.pop("**total**")
    assert total == tuple(sum(column) for column in zip(*rows.values(), strict=True))
    assert total[0] >= MINIMUM_TOTAL
