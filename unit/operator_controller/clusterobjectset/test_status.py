"""Status conditions per outcome, the Succeeded latch and the progress deadline."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from olm.operator_controller.clusterobjectset import status
from olm.operator_controller.clusterobjectset.status import Outcome, OutcomeKind

NOW = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.UTC)


def conditions(
    existing: list[dict[str, Any]], outcome: Outcome, **kw: Any
) -> dict[str, tuple[str, str, str]]:
    args: dict[str, Any] = {"name": "1.2.0", "generation": 1, "due": None, "minutes": None, "now": NOW, **kw}
    items = status.apply_outcome(existing, outcome, **args)
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in items}


@pytest.mark.parametrize(
    ("kind", "progressing", "available"),
    [
        pytest.param(
            OutcomeKind.ROLLING_OUT, ("True", "RollingOut"), ("False", "ProbeFailure"), id="rolling-out"
        ),
        pytest.param(OutcomeKind.RETRYING, ("True", "Retrying"), ("Unknown", "Reconciling"), id="retrying"),
        pytest.param(OutcomeKind.BLOCKED, ("False", "Blocked"), ("Unknown", "Reconciling"), id="blocked"),
        pytest.param(
            OutcomeKind.SUCCEEDED, ("True", "Succeeded"), ("True", "ProbesSucceeded"), id="succeeded"
        ),
        pytest.param(OutcomeKind.ARCHIVED, ("False", "Archived"), ("Unknown", "Archived"), id="archived"),
    ],
)
def test_condition_table(kind: OutcomeKind, progressing: tuple[str, str], available: tuple[str, str]) -> None:
    result = conditions([], Outcome(kind, "why"))
    assert result["Progressing"][:2] == progressing
    assert result["Available"][:2] == available


def test_messages() -> None:
    assert (
        conditions([], Outcome(OutcomeKind.ROLLING_OUT, "probe"))["Progressing"][2]
        == "Revision 1.2.0 is rolling out."
    )
    assert conditions([], Outcome(OutcomeKind.ROLLING_OUT, "probe"))["Available"][2] == "probe"
    done = conditions([], Outcome(OutcomeKind.SUCCEEDED))
    assert done["Progressing"][2] == "Revision 1.2.0 has rolled out."
    assert done["Available"][2] == "Objects are available and pass all probes."
    assert done["Succeeded"] == ("True", "Succeeded", "Revision succeeded rolling out.")
    archived = conditions([], Outcome(OutcomeKind.ARCHIVED))
    assert (archived["Progressing"][2], archived["Available"][2]) == (
        "revision is archived",
        "revision is archived",
    )
    retrying = conditions([], Outcome(OutcomeKind.RETRYING, "phase 0 validation error: x"))
    assert retrying["Progressing"][2] == retrying["Available"][2] == "phase 0 validation error: x"


def test_the_polled_kinds_of_a_succeeded_revision_stay_out_of_its_conditions() -> None:
    note = "Drift of ConfigMap.core objects is checked every 30s by GET: ..."
    done = conditions([], Outcome(OutcomeKind.SUCCEEDED, detail=note))
    assert done["Progressing"][2] == "Revision 1.2.0 has rolled out."
    assert done["Succeeded"][2] == "Revision succeeded rolling out."


def test_succeeded_is_a_latch() -> None:
    done = status.apply_outcome(
        [], Outcome(OutcomeKind.SUCCEEDED), name="1.0.0", generation=1, due=None, minutes=None, now=NOW
    )
    later = status.apply_outcome(
        done,
        Outcome(OutcomeKind.ROLLING_OUT, "x"),
        name="1.0.0",
        generation=1,
        due=None,
        minutes=None,
        now=NOW,
    )
    assert {c["type"]: c["status"] for c in later}["Succeeded"] == "True"
    assert conditions([], Outcome(OutcomeKind.ROLLING_OUT)).get("Succeeded") is None


@pytest.mark.parametrize(
    ("kind", "last_status"),
    [
        # Upstream's last status is the Progressing message the deadline replaces: for a rollout
        # waiting on probes that names the bundle version, not the object (Available names it).
        pytest.param(OutcomeKind.ROLLING_OUT, "Revision 1.2.0 is rolling out.", id="rolling-out-exceeds"),
        pytest.param(OutcomeKind.RETRYING, "last words", id="retrying-exceeds"),
        pytest.param(OutcomeKind.BLOCKED, None, id="blocked-stays-blocked"),
        pytest.param(OutcomeKind.SUCCEEDED, None, id="success-recovers"),
    ],
)
def test_progress_deadline(kind: OutcomeKind, last_status: str | None) -> None:
    past = NOW - datetime.timedelta(seconds=1)
    result = conditions([], Outcome(kind, "last words", detail="ours"), due=past, minutes=10)
    assert (result["Progressing"][1] == "ProgressDeadlineExceeded") is (last_status is not None)
    if last_status is not None:
        assert result["Progressing"] == (
            "False",
            "ProgressDeadlineExceeded",
            f"Revision has not rolled out for 10 minute(s). Last status: {last_status}",
        )
    future = conditions([], Outcome(kind, "x"), due=NOW + datetime.timedelta(seconds=1), minutes=10)
    assert future["Progressing"][1] != "ProgressDeadlineExceeded"


def test_deadline_counts_from_creation_in_configurable_minutes_until_success() -> None:
    cos: dict[str, Any] = {
        "metadata": {"creationTimestamp": "2026-01-01T12:00:00Z"},
        "spec": {"progressDeadlineMinutes": 10},
        "status": {"conditions": []},
    }
    assert status.deadline(cos, 60.0) == NOW + datetime.timedelta(minutes=10)
    assert status.deadline(cos, 0.3) == NOW + datetime.timedelta(seconds=3)
    cos["status"]["conditions"] = [{"type": "Succeeded", "status": "True"}]
    assert status.deadline(cos, 60.0) is None
    assert status.deadline({"metadata": {}, "spec": {}}, 60.0) is None


def test_transition_time_kept_while_status_unchanged() -> None:
    first = status.apply_outcome(
        [], Outcome(OutcomeKind.ROLLING_OUT, "a"), name="1.0.0", generation=1, due=None, minutes=None, now=NOW
    )
    later = NOW + datetime.timedelta(minutes=5)
    second = status.apply_outcome(
        first,
        Outcome(OutcomeKind.ROLLING_OUT, "b"),
        name="1.0.0",
        generation=1,
        due=None,
        minutes=None,
        now=later,
    )
    assert second[0]["lastTransitionTime"] == first[0]["lastTransitionTime"]


def test_phases_are_news_until_the_succeeded_latch_is_set() -> None:
    def after(existing: list[dict[str, Any]], outcome: Outcome) -> list[dict[str, Any]]:
        return status.apply_outcome(
            existing, outcome, name="1.0.0", generation=1, due=None, minutes=None, now=NOW
        )

    rolling = after([], Outcome(OutcomeKind.ROLLING_OUT))
    succeeded = after(rolling, Outcome(OutcomeKind.SUCCEEDED))
    assert not status.succeeded_before({"metadata": {"name": "r"}})
    assert not status.succeeded_before({"status": {"conditions": rolling}})
    assert status.succeeded_before({"status": {"conditions": succeeded}})
    # The latch outlives later outcomes, so a revision retrying after a restart stays quiet too.
    retrying = after(succeeded, Outcome(OutcomeKind.RETRYING, "x"))
    assert status.succeeded_before({"status": {"conditions": retrying}})
