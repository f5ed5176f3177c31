"""Update readiness (roadmap F25): what an OperatorCondition holds (`readiness.not_ready`) and the
gate over it (`plan.unready`)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api import conditions as api
from olm.api.extensionspec import (
    ExtensionSpec,
    Readiness,
    UpgradeSpec,
)
from olm.pipeline import plan
from olm.pipeline.preflight import readiness
from olm.pipeline.resolve import Installed, ResolvedBundle
from unit.pipeline.specs import CANDIDATE, INSTALLED, extension_spec


def condition(kind: str, status: str, reason: str = "Busy", message: str = "migrating") -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": "x"}


def operator_condition(
    *conditions: dict[str, Any], overrides: tuple[dict[str, Any], ...] = ()
) -> dict[str, Any]:
    return {
        "apiVersion": "operators.coreos.com/v2",
        "kind": "OperatorCondition",
        "metadata": {"name": "x.v1.0.0", "namespace": "ns"},
        "spec": {"conditions": list(conditions), "overrides": list(overrides)},
    }


@pytest.mark.parametrize(
    ("kind", "held"),
    [
        ("Upgradeable", {"1.0.1": True, "1.1.0": True, "2.0.0": True, "0.9.0": True}),
        ("MinorUpgradeable", {"1.0.1": False, "1.1.0": True, "2.0.0": True, "0.9.0": True}),
        ("MajorUpgradeable", {"1.0.1": False, "1.1.0": False, "2.0.0": True, "0.9.0": True}),
        ("SomethingElse", {"1.0.1": False, "1.1.0": False, "2.0.0": False, "0.9.0": False}),
    ],
)
def test_each_condition_holds_the_updates_of_its_semver_class(kind: str, held: dict[str, bool]) -> None:
    signal = operator_condition(condition(kind, "False"))
    assert {v: readiness.not_ready(signal, "1.0.0", v) is not None for v in held} == held


def test_true_unknown_missing_and_absent_hold_nothing() -> None:
    for signal in (
        operator_condition(condition("Upgradeable", "True")),
        operator_condition(condition("Upgradeable", "Unknown")),
        operator_condition(),
        {"metadata": {"name": "x"}},
        None,
    ):
        assert readiness.not_ready(signal, "1.0.0", "2.0.0") is None


def test_the_condition_is_quoted() -> None:
    signal = operator_condition(condition("Upgradeable", "False", "Migrating", "moving data"))
    assert readiness.not_ready(signal, "1.0.0", "1.0.1") == readiness.NotReady(
        type="Upgradeable", reason="Migrating", message="moving data", overridden=False
    )


def test_an_override_wins_over_the_operator_type_by_type() -> None:
    forced = operator_condition(
        condition("Upgradeable", "False"), overrides=(condition("Upgradeable", "True", "Forced", "ok"),)
    )
    assert readiness.not_ready(forced, "1.0.0", "2.0.0") is None
    # An override of another type leaves the operator's own condition in force.
    other = operator_condition(
        condition("Upgradeable", "False"), overrides=(condition("MajorUpgradeable", "True"),)
    )
    assert readiness.not_ready(other, "1.0.0", "1.0.1") is not None
    # An administrator can hold an update too, and the hold says who set it.
    held = operator_condition(overrides=(condition("Upgradeable", "False", "Freeze", "change freeze"),))
    said = readiness.not_ready(held, "1.0.0", "1.0.1")
    assert said is not None
    assert (said.reason, said.overridden) == ("Freeze", True)


def spec(mode: Readiness) -> ExtensionSpec:
    return extension_spec(UpgradeSpec(readiness=mode, approved_version="1.1.0"))


NOT_NOW = operator_condition(condition("Upgradeable", "False", "Migrating", "moving data"))


def unready(
    mode: Readiness, installed: Installed | None = INSTALLED, bundle: ResolvedBundle = CANDIDATE
) -> plan.Held | None:
    request = plan.Request(extension="x", spec=spec(mode), installed=installed)
    return plan.unready(request, bundle, NOT_NOW)


def test_the_gate_holds_an_update_and_says_who_and_how_to_force_it() -> None:
    held = unready(Readiness.RESPECT)
    assert held is not None
    assert (held.bundle, held.reason) == (CANDIDATE, api.REASON_READINESS)
    assert held.message == (
        'bundle "x.v1.1.0" (1.1.0) waits for the installed operator: OperatorCondition ns/x.v1.0.0 says '
        "Upgradeable=False, reason Migrating: moving data. The update applies once that condition is "
        "cleared; set it True in the object's spec.overrides, or spec.upgrade.readiness to Ignore, "
        "to force it"
    )
    # Ignore still reports what would hold (the caller warns and goes on).
    assert unready(Readiness.IGNORE) is not None


def test_the_gate_asks_only_about_updates_with_the_contract() -> None:
    assert unready(Readiness.NONE) is None
    assert unready(Readiness.RESPECT, installed=None) is None
    same = ResolvedBundle(package="x", name="x.v1.0.0", version="1.0.0", image="img", catalog="c")
    assert unready(Readiness.RESPECT, bundle=same) is None
