"""e2e tests run against the local control plane and registry. The binaries come in two fixtures:
`control_plane_binaries`, the `run` set of `olm_testkit.binaries` (the control plane, the real
node's, CoreDNS, cert-manager), and `test_tool_binaries`, which adds the test-only tools (otelcol,
promtool, operator-condition, OLM v0, cosign, Toxiproxy). `make test` builds those tools while its
sessions run, so the modules that use them run as late as they may (`tools_last`) and wait for the
build there if it is not done."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from olm_testkit import binaries

TOOL_FIXTURE = "test_tool_binaries"


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
    if kinds == {"processes"}:
        # Not the deployed suite: its one tool, Toxiproxy, is built first and in seconds, and the
        # order of its modules lets a real ten-minute progress deadline pass while others run.
        items[:] = tools_last(items, session_pair=e2e_dir / "operator_controller")


def tools_last(items: list[pytest.Item], *, session_pair: Path) -> list[pytest.Item]:
    """`items` with the modules that use the test-only tools moved back, whole (so that their
    fixtures are set up once): by then `make test`'s build of those tools has finished, or nearly.

    Not past the first test of `session_pair`, though: that directory's operator-controller and
    catalogd run from its first test to the end of the session, and the directories that sort
    before it start their own, which must not reconcile beside them. So the modules before it go
    to just before it, and its own (and those after it) to the end.
    """
    starts = next((i for i, item in enumerate(items) if session_pair in item.path.parents), len(items))
    waiting = {item.path for item in items if TOOL_FIXTURE in getattr(item, "fixturenames", ())}

    def moved(part: list[pytest.Item]) -> list[pytest.Item]:
        return [item for item in part if item.path not in waiting] + [
            item for item in part if item.path in waiting
        ]

    return moved(items[:starts]) + moved(items[starts:])


def _binaries(binary_set: str) -> Path:
    assets = os.environ.get("OLMPY_ASSETS")
    return Path(assets) if assets else binaries.ensure_binaries(binary_set)


@pytest.fixture(scope="session")
def control_plane_binaries() -> Path:
    """`$OLMPY_ASSETS` when set (binaries built elsewhere), else the `run` set, built on first use
    into the runtime's cache (`~/.cache/olm-runtime/bin`, shared with `python -m olm_runtime.testing
    binaries`)."""
    return _binaries("run")


@pytest.fixture(scope="session")
def test_tool_binaries() -> Path:
    """`$OLMPY_ASSETS` when set, else the `test` set: the `run` set and the test-only tools. A tool
    another process is building (`make test` builds them beside its sessions) is waited for, one
    that nobody builds is built here."""
    return _binaries("test")
