"""Conditions: transition time moves only with status; messages are capped."""

from __future__ import annotations

import datetime
from typing import Any

from olm_runtime import conditions

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
T1 = T0 + datetime.timedelta(minutes=5)


def test_transition_time_changes_only_with_status() -> None:
    items: list[dict[str, Any]] = []
    assert conditions.set_condition(items, "Ready", "False", reason="Waiting", message="m", now=T0)
    assert conditions.set_condition(items, "Ready", "False", reason="StillWaiting", message="m2", now=T1)
    assert items[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert items[0]["reason"] == "StillWaiting"
    assert conditions.set_condition(items, "Ready", "True", reason="Done", message="ok", now=T1)
    assert items[0]["lastTransitionTime"] == "2026-01-01T00:05:00Z"


def test_unchanged_condition_reports_no_change() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(
        items, "Ready", "True", reason="Done", message="ok", observed_generation=2, now=T0
    )
    assert not conditions.set_condition(
        items, "Ready", "True", reason="Done", message="ok", observed_generation=2, now=T1
    )
    assert conditions.set_condition(
        items, "Ready", "True", reason="Done", message="ok", observed_generation=3, now=T1
    )
    assert items[0]["observedGeneration"] == 3
    assert conditions.is_true(items, "Ready")
    assert not conditions.is_true(items, "Other")


def test_messages_are_capped_at_the_api_limit() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(items, "Ready", "False", reason="Big", message="x" * 40000, now=T0)
    assert len(items[0]["message"]) == conditions.MAX_MESSAGE_LENGTH
    assert items[0]["message"].endswith("...")


def test_conditions_are_keyed_by_type() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(items, "A", "True", reason="R", message="", now=T0)
    conditions.set_condition(items, "B", "True", reason="R", message="", now=T0)
    conditions.set_condition(items, "A", "False", reason="R", message="", now=T1)
    assert [c["type"] for c in items] == ["A", "B"]
    assert conditions.remove_condition(items, "A")
    assert [c["type"] for c in items] == ["B"]
