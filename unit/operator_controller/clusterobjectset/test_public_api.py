"""The clusterobjectset package's public surface is pinned."""

from __future__ import annotations

from olm.operator_controller import clusterobjectset


def test_exports() -> None:
    assert sorted(clusterobjectset.__all__) == [
        "CONTROLLER_NAME",
        "IDENTITY_POLICY",
        "Options",
        "Reconciler",
        "setup_with_manager",
    ]
