"""Fixtures of the observability e2e tests: a real OpenTelemetry Collector and a catalogd and an
operator-controller of their own that export to it.

The processes are module-scoped and separate from `e2e/operator_controller`'s session pair, so
tracing and JSON logs change nothing for other tests. Like every operator-controller, this pair
reconciles every ClusterExtension of the cluster: this directory must not share a session with a
live session pair (it sorts before `e2e/operator_controller`, so `pytest e2e` starts that pair
only after this directory is done).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from e2e.operator_controller.conftest import SUITE_SCOPE
from olm_runtime.testing.controlplane import ControlPlane
from olm_testkit.collector import Collector, CollectorOptions
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess


@dataclass(frozen=True)
class Traced:
    """The collector and the two processes exporting to it."""

    collector: Collector
    catalogd: CatalogdProcess
    operator_controller: OperatorControllerProcess


@pytest.fixture(scope="module")
def collector(test_tool_binaries: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Collector]:
    options = CollectorOptions(
        binary=test_tool_binaries / "otelcol", state_dir=tmp_path_factory.mktemp("otelcol")
    )
    with Collector(options) as running:
        yield running


@pytest.fixture(scope="module")
async def traced(
    control_plane: ControlPlane,
    olm_crds: None,
    collector: Collector,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Traced]:
    env = collector.environment()
    catalogd = CatalogdProcess(
        control_plane,
        tmp_path_factory.mktemp("catalogd"),
        extra_args=("--log-format=json",),
        env=env,
        scope_selector=SUITE_SCOPE,  # the catalogs `serve_catalog` makes
    )
    operator_controller = OperatorControllerProcess(
        control_plane,
        tmp_path_factory.mktemp("operator-controller"),
        extra_args=("--log-format=json",),
        env=env,
    )
    async with catalogd.running(), operator_controller.running():
        yield Traced(collector, catalogd, operator_controller)
