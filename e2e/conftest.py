"""e2e tests run against the local control plane and registry, with every binary OLM's tests use
(the `test` set of `olm_testkit.binaries`: the control plane, the real node's, cert-manager,
otelcol, promtool, operator-condition, OLM v0)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from olm_testkit import binaries


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    e2e_dir = Path(__file__).parent
    deployed_dir = e2e_dir / "deployed"
    kinds = set()
    for item in items:
        if e2e_dir in item.path.parents:
            item.add_marker(pytest.mark.e2e)
            kinds.add("deployed" if deployed_dir in item.path.parents else "processes")
    if kinds == {"deployed", "processes"}:
        # One control plane per session: OLM deployed as Pods and OLM run as test processes would
        # both reconcile the same extensions.
        raise pytest.UsageError(
            "run e2e/deployed in a session of its own: `pytest e2e --ignore=e2e/deployed` and "
            "`pytest e2e/deployed` (make test does both)"
        )


@pytest.fixture(scope="session")
def control_plane_binaries() -> Path:
    """`$OLMPY_ASSETS` when set (binaries built elsewhere), else the pinned binaries the tests use,
    built on first use into the runtime's cache (`~/.cache/olm-runtime/bin`, shared with
    `python -m olm_runtime.testing binaries`): the `test` set, or the `run` set alone when
    `$OLMPY_TEST_BINARIES` says `run` (a session that needs none of the test-only tools, which
    `make test` builds meanwhile)."""
    assets = os.environ.get("OLMPY_ASSETS")
    return Path(assets) if assets else binaries.ensure_binaries(os.environ.get("OLMPY_TEST_BINARIES", "test"))
