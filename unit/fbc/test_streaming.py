"""Reading a catalog is streaming: memory follows the largest object, never the catalog."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from olm import fbc
from unit.fbc.bigcatalog import write_catalog


def _peak_while(run: object) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        assert callable(run)
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_catalog_size(tmp_path: Path) -> None:
    small, large = tmp_path / "small", tmp_path / "large"
    small_size = write_catalog(small, packages=2, bundles_per_package=20, bundle_bytes=20_000)
    large_size = write_catalog(large, packages=40, bundles_per_package=20, bundle_bytes=20_000)
    assert large_size > 15 * small_size > 10_000_000

    def consume(root: Path) -> object:
        return lambda: sum(1 for _ in fbc.checked(fbc.iter_metas(root)))

    small_peak, large_peak = _peak_while(consume(small)), _peak_while(consume(large))
    assert large_peak < 4 * 1024 * 1024, large_peak  # one read chunk plus one object, roughly
    assert large_peak < 2 * small_peak + 1024 * 1024


def test_generated_catalog_is_valid(tmp_path: Path) -> None:
    write_catalog(tmp_path, packages=3, bundles_per_package=4, bundle_bytes=100, fmt="yaml")
    metas = list(fbc.iter_metas(tmp_path))
    assert len(metas) == 3 * (2 + 4)
    assert fbc.validate(metas) == []
