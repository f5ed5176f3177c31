"""Status conditions (`metav1.Condition`) on plain dicts, with Kubernetes' conventions.

`lastTransitionTime` changes only when the status changes; `observedGeneration` records which spec
the condition describes; conditions are a list keyed by `type`. Messages are capped at the API's
32768 characters. Functions take a `now` so callers (and tests) control time.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, MutableSequence, Sequence
from typing import Any, Literal

Status = Literal["True", "False", "Unknown"]
MAX_MESSAGE_LENGTH = 32768


def timestamp(now: datetime.datetime | None = None) -> str:
    """RFC 3339 with second precision in UTC, as `metav1.Time` serialises."""
    moment = now or datetime.datetime.now(datetime.UTC)
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def find(conditions: Sequence[Mapping[str, Any]], condition_type: str) -> Mapping[str, Any] | None:
    return next((c for c in conditions if c.get("type") == condition_type), None)


def of(obj: Mapping[str, Any] | None, condition_type: str) -> dict[str, Any]:
    """A copy of the condition `condition_type` in `obj`'s `status.conditions`; `{}` when there is
    none (or no object), so callers can read `.get("status")` without a check."""
    found = find(((obj or {}).get("status") or {}).get("conditions") or (), condition_type)
    return dict(found) if found is not None else {}


def is_true(conditions: Sequence[Mapping[str, Any]], condition_type: str) -> bool:
    condition = find(conditions, condition_type)
    return condition is not None and condition.get("status") == "True"


def set_condition(
    conditions: MutableSequence[dict[str, Any]],
    condition_type: str,
    status: Status,
    *,
    reason: str,
    message: str,
    observed_generation: int | None = None,
    now: datetime.datetime | None = None,
) -> bool:
    """Add or update the condition of `condition_type` in place; return True if anything changed."""
    if len(message) > MAX_MESSAGE_LENGTH:
        message = message[: MAX_MESSAGE_LENGTH - 3] + "..."
    desired: dict[str, Any] = {"type": condition_type, "status": status, "reason": reason, "message": message}
    if observed_generation is not None:
        desired["observedGeneration"] = observed_generation
    for index, existing in enumerate(conditions):
        if existing.get("type") != condition_type:
            continue
        same_status = existing.get("status") == status
        desired["lastTransitionTime"] = existing.get("lastTransitionTime") if same_status else timestamp(now)
        if not desired["lastTransitionTime"]:
            desired["lastTransitionTime"] = timestamp(now)
        if existing == desired:
            return False
        conditions[index] = desired
        return True
    desired["lastTransitionTime"] = timestamp(now)
    conditions.append(desired)
    return True


def remove_condition(conditions: MutableSequence[dict[str, Any]], condition_type: str) -> bool:
    for index, existing in enumerate(conditions):
        if existing.get("type") == condition_type:
            del conditions[index]
            return True
    return False
