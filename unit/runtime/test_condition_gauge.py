"""`ConditionGauge`: one series per object and condition type, for the current status and reason."""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry

from olm_runtime.metrics import ConditionGauge

NAME = "example_widget_status_condition"


def _gauge() -> tuple[ConditionGauge, CollectorRegistry]:
    registry = CollectorRegistry()
    return ConditionGauge(NAME, "Conditions.", types=("Ready", "Progressing"), registry=registry), registry


def _series(registry: CollectorRegistry) -> dict[tuple[str, str, str, str], float]:
    return {
        (s.labels["name"], s.labels["type"], s.labels["status"], s.labels["reason"]): s.value
        for family in registry.collect()
        for s in family.samples
    }


def _condition(kind: str, status: str, reason: str) -> dict[str, Any]:
    return {"type": kind, "status": status, "reason": reason, "message": "varies"}


def test_only_the_reported_status_and_reason_of_each_type_has_a_series() -> None:
    gauge, registry = _gauge()
    gauge.set("a", [_condition("Ready", "False", "Waiting"), _condition("Progressing", "True", "Working")])
    gauge.set("b", [_condition("Ready", "True", "Done")])
    assert _series(registry) == {
        ("a", "Ready", "False", "Waiting"): 1.0,
        ("a", "Progressing", "True", "Working"): 1.0,
        ("b", "Ready", "True", "Done"): 1.0,
    }


def test_a_new_status_or_reason_replaces_the_old_series() -> None:
    gauge, registry = _gauge()
    gauge.set("a", [_condition("Ready", "False", "Waiting")])
    gauge.set("a", [_condition("Ready", "False", "Retrying")])
    assert _series(registry) == {("a", "Ready", "False", "Retrying"): 1.0}
    gauge.set("a", [_condition("Ready", "True", "Done")])
    assert _series(registry) == {("a", "Ready", "True", "Done"): 1.0}


def test_conditions_of_other_types_are_not_reported_and_dropped_ones_lose_their_series() -> None:
    gauge, registry = _gauge()
    gauge.set("a", [_condition("Ready", "True", "Done"), _condition("Deprecated", "False", "No")])
    assert _series(registry) == {("a", "Ready", "True", "Done"): 1.0}
    gauge.set("a", [])
    assert _series(registry) == {}


def test_remove_drops_every_series_of_the_object_only() -> None:
    gauge, registry = _gauge()
    gauge.set("a", [_condition("Ready", "True", "Done"), _condition("Progressing", "True", "Done")])
    gauge.set("b", [_condition("Ready", "Unknown", "Starting")])
    gauge.remove("a")
    gauge.remove("never-seen")
    assert _series(registry) == {("b", "Ready", "Unknown", "Starting"): 1.0}
