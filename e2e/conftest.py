"""e2e tests run against the local control plane and registry that `hack/controlplane` builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from hack.controlplane import build


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    e2e_dir = Path(__file__).parent
    for item in items:
        if e2e_dir in item.path.parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def control_plane_binaries() -> Path:
    """Build the pinned binaries on first use (cached under ~/.cache/olm-py/bin)."""
    return build.ensure_binaries()
