"""The status a revision reports, computed from what one reconcile found (pure).

| outcome       | Progressing                     | Available                 |
|---------------|---------------------------------|---------------------------|
| rolling out   | True  RollingOut                | False ProbeFailure        |
| retrying      | True  Retrying                  | Unknown Reconciling       |
| blocked       | False Blocked                   | Unknown Reconciling       |
| succeeded     | True  Succeeded                 | True  ProbesSucceeded     |
| archived      | False Archived                  | Unknown Archived          |
| removing      | True  Removing                  | Unknown Reconciling       |

`Succeeded` is a latch: set True the first time a rollout completes and never changed after.
With a progress deadline, a revision still rolling out or retrying when it passes reports
`Progressing=False/ProgressDeadlineExceeded` (and recovers when it later succeeds).
"""

from __future__ import annotations

import datetime
import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import conditions as api
from olm_runtime import conditions

__all__ = [
    "Outcome",
    "OutcomeKind",
    "apply_outcome",
    "deadline",
    "parse_time",
    "succeeded_before",
]


class OutcomeKind(enum.Enum):
    ROLLING_OUT = "RollingOut"
    RETRYING = "Retrying"
    BLOCKED = "Blocked"
    SUCCEEDED = "Succeeded"
    ARCHIVED = "Archived"
    REMOVING = "Removing"
    """Being deleted, and the teardown waits on something the message names."""


@dataclass(frozen=True)
class Outcome:
    kind: OutcomeKind
    message: str = ""
    """The condition's message: upstream's text where upstream defines one."""
    detail: str = ""
    """What this implementation adds (every object failing probes and its phase; the kinds whose
    drift is polled): the Event of the change carries it, never the condition."""


_Condition = tuple[conditions.Status, str]

_CONDITIONS: Mapping[OutcomeKind, tuple[_Condition, _Condition]] = {
    # outcome                  Progressing                         Available
    OutcomeKind.ROLLING_OUT: (("True", api.REASON_ROLLING_OUT), ("False", api.REASON_PROBE_FAILURE)),
    OutcomeKind.RETRYING: (("True", api.REASON_RETRYING), ("Unknown", api.REASON_RECONCILING)),
    OutcomeKind.BLOCKED: (("False", api.REASON_BLOCKED), ("Unknown", api.REASON_RECONCILING)),
    OutcomeKind.SUCCEEDED: (("True", api.REASON_SUCCEEDED), ("True", api.REASON_PROBES_SUCCEEDED)),
    OutcomeKind.ARCHIVED: (("False", api.REASON_ARCHIVED), ("Unknown", api.REASON_ARCHIVED)),
    OutcomeKind.REMOVING: (("True", api.REASON_REMOVING), ("Unknown", api.REASON_RECONCILING)),
}


def parse_time(value: str | None) -> datetime.datetime | None:
    if not value:
        return None
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))


def succeeded_before(cos: Mapping[str, Any]) -> bool:
    """Whether the revision's `Succeeded` latch is set: it rolled out once (under this process or an
    earlier one), and each of its phases was reported done then."""
    return conditions.is_true((cos.get("status") or {}).get("conditions") or [], api.TYPE_SUCCEEDED)


def deadline(cos: Mapping[str, Any], minute_seconds: float) -> datetime.datetime | None:
    """When the rollout must have succeeded, or None (no deadline, or already succeeded once)."""
    minutes = (cos.get("spec") or {}).get("progressDeadlineMinutes")
    created = parse_time((cos.get("metadata") or {}).get("creationTimestamp"))
    if not minutes or created is None or succeeded_before(cos):
        return None
    return created + datetime.timedelta(seconds=float(minutes) * minute_seconds)


def _messages(kind: OutcomeKind, name: str, message: str) -> tuple[str, str]:
    if kind is OutcomeKind.SUCCEEDED:
        return f"Revision {name} has rolled out.", "Objects are available and pass all probes."
    if kind is OutcomeKind.ROLLING_OUT:
        return f"Revision {name} is rolling out.", message
    if kind is OutcomeKind.ARCHIVED:
        return "revision is archived", "revision is archived"
    if kind is OutcomeKind.REMOVING:
        return message, "Revision is being removed."
    return message, message


def apply_outcome(
    existing: Sequence[Mapping[str, Any]],
    outcome: Outcome,
    *,
    name: str,
    generation: int | None,
    due: datetime.datetime | None,
    minutes: int | None,
    now: datetime.datetime,
) -> list[dict[str, Any]]:
    """The conditions after `outcome`, starting from `existing` (transition times kept); `name`
    is what the messages call the revision (`revisions.message_name`)."""
    items = [dict(c) for c in existing]

    def put(kind: str, condition: _Condition, message: str) -> None:
        status, reason = condition
        conditions.set_condition(
            items, kind, status, reason=reason, message=message, observed_generation=generation, now=now
        )

    progressing_message, available_message = _messages(outcome.kind, name, outcome.message)
    progressing, available = _CONDITIONS[outcome.kind]
    if due is not None and now >= due and outcome.kind in (OutcomeKind.ROLLING_OUT, OutcomeKind.RETRYING):
        # The last status is the Progressing message the deadline replaces, as upstream writes it;
        # the objects failing probes stay in the Available message.
        progressing = ("False", api.REASON_PROGRESS_DEADLINE_EXCEEDED)
        progressing_message = (
            f"Revision has not rolled out for {minutes} minute(s). Last status: {progressing_message}"
        )
    put(api.TYPE_PROGRESSING, progressing, progressing_message)
    put(api.TYPE_AVAILABLE, available, available_message)
    if outcome.kind is OutcomeKind.SUCCEEDED and not conditions.is_true(items, api.TYPE_SUCCEEDED):
        put(api.TYPE_SUCCEEDED, ("True", api.REASON_SUCCEEDED), "Revision succeeded rolling out.")
    return items
