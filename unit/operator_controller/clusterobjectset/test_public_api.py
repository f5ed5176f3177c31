"""The clusterobjectset package's public surface is pinned."""

from __future__ import annotations

import pytest

from olm.operator_controller import clusterobjectset


def test_exports() -> None:
    assert sorted(clusterobjectset.__all__) == [
        "CONTROLLER_NAME",
        "COS",
        "DEADLINE_UNIT_ENV",
        "Options",
        "Reconciler",
        "setup",
    ]


def test_options_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(clusterobjectset.DEADLINE_UNIT_ENV, "0.5")
    assert clusterobjectset.Options.from_env().deadline_minute_seconds == 0.5
    assert clusterobjectset.Options.from_env(deadline_minute_seconds=2.0).deadline_minute_seconds == 2.0
    monkeypatch.delenv(clusterobjectset.DEADLINE_UNIT_ENV)
    assert clusterobjectset.Options.from_env().deadline_minute_seconds == 60.0
