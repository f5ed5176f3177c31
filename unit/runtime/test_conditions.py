"""Conditions keep Kubernetes' `metav1.Condition` conventions on plain dicts (docs/runtime/conditions.md)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olm_runtime import conditions

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
T1 = T0 + datetime.timedelta(minutes=5)
T2 = T0 + datetime.timedelta(hours=1)


def test_last_transition_time_changes_only_when_the_status_changes() -> None:
    items: list[dict[str, Any]] = []
    assert conditions.set_condition(items, "Ready", "False", reason="Waiting", message="m", now=T0)
    assert conditions.set_condition(items, "Ready", "False", reason="StillWaiting", message="m2", now=T1)
    assert items[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert items[0]["reason"] == "StillWaiting"
    assert conditions.set_condition(items, "Ready", "True", reason="Done", message="ok", now=T1)
    assert items[0]["lastTransitionTime"] == "2026-01-01T00:05:00Z"


def test_a_change_of_observed_generation_alone_keeps_the_transition_time() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(
        items, "Ready", "True", reason="Done", message="ok", observed_generation=1, now=T0
    )
    assert conditions.set_condition(
        items, "Ready", "True", reason="Done", message="ok", observed_generation=2, now=T2
    )
    assert items[0]["observedGeneration"] == 2
    assert items[0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"


def test_setting_an_identical_condition_reports_no_change_and_leaves_the_list_alone() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(
        items, "Ready", "True", reason="Done", message="ok", observed_generation=2, now=T0
    )
    before = [dict(c) for c in items]
    assert not conditions.set_condition(
        items, "Ready", "True", reason="Done", message="ok", observed_generation=2, now=T1
    )
    assert items == before
    assert conditions.set_condition(
        items, "Ready", "True", reason="Done", message="ok", observed_generation=3, now=T1
    )
    assert items[0]["observedGeneration"] == 3


def test_observed_generation_is_written_only_when_given() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(items, "Ready", "True", reason="Done", message="ok", now=T0)
    assert "observedGeneration" not in items[0]
    assert set(items[0]) == {"type", "status", "reason", "message", "lastTransitionTime"}


def test_messages_are_capped_at_the_api_limit() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(items, "Ready", "False", reason="Big", message="x" * 40000, now=T0)
    assert len(items[0]["message"]) == conditions.MAX_MESSAGE_LENGTH
    assert items[0]["message"].endswith("...")
    exact = "y" * conditions.MAX_MESSAGE_LENGTH
    conditions.set_condition(items, "Ready", "False", reason="Big", message=exact, now=T0)
    assert items[0]["message"] == exact, "a message at the limit is kept whole"


def test_conditions_are_a_list_keyed_by_type_with_one_entry_per_type() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(items, "A", "True", reason="R", message="", now=T0)
    conditions.set_condition(items, "B", "True", reason="R", message="", now=T0)
    conditions.set_condition(items, "A", "False", reason="R", message="", now=T1)
    assert [c["type"] for c in items] == ["A", "B"], "an update stays in place; no second A"
    assert items[1]["lastTransitionTime"] == "2026-01-01T00:00:00Z", "B was not touched"
    assert conditions.remove_condition(items, "A")
    assert [c["type"] for c in items] == ["B"]


def test_removing_a_condition_that_is_not_there_reports_no_change() -> None:
    items: list[dict[str, Any]] = [{"type": "B", "status": "True"}]
    assert not conditions.remove_condition(items, "A")
    assert items == [{"type": "B", "status": "True"}]


def test_a_condition_without_a_transition_time_gets_one_on_its_next_update() -> None:
    # Objects written by other tools (or by hand) may lack lastTransitionTime; the API requires it.
    items: list[dict[str, Any]] = [{"type": "Ready", "status": "True", "reason": "Done", "message": "ok"}]
    assert conditions.set_condition(items, "Ready", "True", reason="Done", message="ok", now=T1)
    assert items[0]["lastTransitionTime"] == "2026-01-01T00:05:00Z"


def test_find_returns_the_condition_of_a_type_or_none() -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(items, "Ready", "Unknown", reason="Starting", message="", now=T0)
    found = conditions.find(items, "Ready")
    assert found is not None
    assert (found["status"], found["reason"]) == ("Unknown", "Starting")
    assert conditions.find(items, "Progressing") is None


@pytest.mark.parametrize(
    ("status", "expected"), [("True", True), ("False", False), ("Unknown", False)], ids=str
)
def test_is_true_only_for_status_true(status: conditions.Status, expected: bool) -> None:
    items: list[dict[str, Any]] = []
    conditions.set_condition(items, "Ready", status, reason="R", message="", now=T0)
    assert conditions.is_true(items, "Ready") is expected
    assert not conditions.is_true(items, "Missing"), "an absent condition is not true"


def test_timestamps_are_rfc3339_seconds_in_utc() -> None:
    offset = datetime.timezone(datetime.timedelta(hours=2))
    moment = datetime.datetime(2026, 3, 4, 7, 8, 9, 987654, tzinfo=offset)
    assert conditions.timestamp(moment) == "2026-03-04T05:08:09Z"


def test_without_now_the_current_time_is_used() -> None:
    before = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    items: list[dict[str, Any]] = []
    conditions.set_condition(items, "Ready", "True", reason="R", message="")
    after = datetime.datetime.now(datetime.UTC)
    stamped = datetime.datetime.strptime(items[0]["lastTransitionTime"], "%Y-%m-%dT%H:%M:%S%z")
    assert before <= stamped <= after


STATUSES: list[conditions.Status] = ["True", "False", "Unknown"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Ready", "Progressing"]),
            st.sampled_from(STATUSES),
            st.sampled_from(["A", "B"]),
            st.integers(min_value=1, max_value=3),
        ),
        max_size=30,
    )
)
def test_any_sequence_of_updates_keeps_one_entry_per_type_dated_by_its_last_status_change(
    updates: list[tuple[str, conditions.Status, str, int]],
) -> None:
    items: list[dict[str, Any]] = []
    changed_at: dict[str, tuple[str, datetime.datetime]] = {}  # type -> (status, when it last changed)
    for minute, (kind, status, reason, generation) in enumerate(updates):
        now = T0 + datetime.timedelta(minutes=minute)
        before = [dict(c) for c in items]
        changed = conditions.set_condition(
            items,
            kind,
            status,
            reason=reason,
            message=f"{kind} is {status}",
            observed_generation=generation,
            now=now,
        )
        assert changed == (items != before), "the result says whether the list changed"
        if kind not in changed_at or changed_at[kind][0] != status:
            changed_at[kind] = (status, now)
    assert sorted(c["type"] for c in items) == sorted(changed_at)
    for kind, (last_status, when) in changed_at.items():
        found = conditions.find(items, kind)
        assert found is not None
        assert found["status"] == last_status
        assert found["lastTransitionTime"] == conditions.timestamp(when)


def test_of_reads_an_objects_condition_or_nothing() -> None:
    obj = {"status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    found = conditions.of(obj, "Ready")
    assert found == {"type": "Ready", "status": "True"}
    found["status"] = "False"  # a copy: the object is not changed through it
    assert obj["status"]["conditions"][0]["status"] == "True"
    assert conditions.of(obj, "Progressing") == {}
    assert conditions.of({"metadata": {}}, "Ready") == {}
    assert conditions.of(None, "Ready") == {}
