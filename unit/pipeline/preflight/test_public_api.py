"""The preflight package's public surface is pinned."""

from __future__ import annotations

from olm.pipeline import preflight
from olm.pipeline.preflight import crdupgradesafety


def test_exports() -> None:
    assert sorted(preflight.__all__) == [
        "CRDUpgradeSafetyError",
        "MissingPermissionsError",
        "crdupgradesafety",
        "permissions",
    ]
    exported = ["CRDUpgradeSafetyError", "check", "error_message", "violations"]
    assert sorted(crdupgradesafety.__all__) == exported
    assert preflight.CRDUpgradeSafetyError is crdupgradesafety.CRDUpgradeSafetyError
