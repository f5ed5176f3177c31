"""The fault drills' switches and reporting: `soak` selects the long variants, `figures` prints.

Drills run in `make test` at sizes that fit its budget; with `OLMPY_SOAK=1` (`make soak`) they run
at full size. Either way each prints its figures in a "fault drill figures" section at the end of
the session, after the test results, whether it passed or failed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import pytest

from e2e.faults import Figures

_FIGURES = pytest.StashKey[list[tuple[str, dict[str, object]]]]()


@pytest.fixture(scope="session")
def soak() -> bool:
    """Whether to run the long variants (`OLMPY_SOAK=1`, as `make soak` sets it)."""
    return os.environ.get("OLMPY_SOAK") == "1"


@pytest.fixture(autouse=True)
def _olm_crds(olm_crds: None) -> None:
    """The drills start the processes themselves, which need OLM's CRDs and the system namespace."""


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Figures:
    """Call with the drill's figures; they are printed at the end of the session."""
    recorded = request.config.stash.setdefault(_FIGURES, [])

    def record(values: Mapping[str, object]) -> None:
        recorded.append((request.node.nodeid, dict(values)))

    return record


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    recorded = config.stash.get(_FIGURES, [])
    if not recorded:
        return
    terminalreporter.section("fault drill figures")
    for nodeid, values in recorded:
        terminalreporter.write_line(nodeid)
        width = max(len(name) for name in values)
        for name, value in values.items():
            terminalreporter.write_line(f"    {name:<{width}}  {value}")
