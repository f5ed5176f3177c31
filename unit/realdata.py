"""Access to `../shared/realdata` (real bundles and upstream's golden renders) for the unit tests.

The directory sits next to the repository; tests that need it skip with a clear message when it is
absent. Parsed bundles are cached per process: several test modules read the same bundles.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from olm import registryv1

REALDATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "realdata"
GOLDEN = REALDATA / "golden" / "operator-controller-convert-regression"
BUNDLES = REALDATA / "bundles"
FIXTURES = REALDATA / "upstream-fixtures" / "operator-controller-e2e-bundles"


def require() -> Path:
    """The realdata directory, or skip the calling test when it is not there."""
    if not REALDATA.is_dir():
        pytest.skip(f"shared real data not found at {REALDATA.resolve()} (expected next to the repository)")
    return REALDATA


def bundle_dirs() -> list[Path]:
    """Every registry+v1 bundle directory of the real data (empty when the data is absent)."""
    if not REALDATA.is_dir():
        return []
    return sorted(BUNDLES.glob("*/*")) + sorted(FIXTURES.glob("*/*"))


@functools.cache
def load(path: Path) -> registryv1.RegistryV1:
    require()
    return registryv1.load_bundle(path)


def real_bundle(package: str, version: str) -> registryv1.RegistryV1:
    return load(BUNDLES / package / version)
