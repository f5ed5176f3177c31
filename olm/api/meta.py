"""Types shared by the three kinds: status conditions and label selectors.

Both mirror the Kubernetes `meta/v1` types of the same name, with the same wire shape and limits,
so generic tools (`kubectl wait --for=condition=...`) work on OLM objects.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import ConfigDict, Field

from olm.api import rules
from olm.api.base import Model
from olm.api.markers import ATOMIC_LIST, INT32, INT64, ListMap

__all__ = [
    "CONDITION_REASON_PATTERN",
    "CONDITION_TYPE_PATTERN",
    "Condition",
    "ConditionStatus",
    "Conditions",
    "ImageRef",
    "LabelSelector",
    "LabelSelectorOperator",
    "LabelSelectorRequirement",
    "PollIntervalMinutes",
    "ProgressDeadlineMinutes",
]

CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
CONDITION_TYPE_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)


class ConditionStatus(StrEnum):
    """Whether a condition holds."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class Condition(Model):
    """One aspect of an object's observed state, such as whether it is installed or progressing."""

    type: Annotated[str, Field(max_length=316, pattern=CONDITION_TYPE_PATTERN)]
    """The aspect this condition describes, in CamelCase (or `example.com/CamelCase`)."""
    status: ConditionStatus
    """Whether the condition holds: True, False or Unknown."""
    observed_generation: Annotated[int, Field(ge=0), INT64] | None = None
    """The `metadata.generation` the condition was computed from; older means out of date."""
    last_transition_time: datetime
    """When `status` last changed."""
    reason: Annotated[str, Field(min_length=1, max_length=1024, pattern=CONDITION_REASON_PATTERN)]
    """A CamelCase identifier of why the condition has its status; automation keys off this."""
    message: Annotated[str, Field(max_length=32768)]
    """A human-readable explanation; says what to change when something is wrong. May be empty."""


Conditions = Annotated[list[Condition], ListMap("type")]
"""A list of conditions holding at most one condition per type."""

ProgressDeadlineMinutes = Annotated[int, Field(ge=10, le=720), INT32]
"""How long a rollout may take, in minutes: 10 to 720 (12 hours)."""
ImageRef = Annotated[str, Field(max_length=1000), *rules.IMAGE_REF_RULES]
"""An image by tag or digest (`<domain>/<path>:<tag>`, `<domain>/<path>@<algorithm>:<hex>`)."""
PollIntervalMinutes = Annotated[int, Field(ge=1, le=2**31 - 1), INT32]
"""Minutes between checks of an image tag for new content."""


class LabelSelectorOperator(StrEnum):
    """How a label selector requirement relates a label key to its values."""

    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"


class LabelSelectorRequirement(Model):
    """A requirement on one label: a key, an operator and (for In and NotIn) values."""

    key: Annotated[str, Field(max_length=317)]
    """The label key the requirement applies to."""
    operator: LabelSelectorOperator
    """In, NotIn, Exists or DoesNotExist."""
    values: Annotated[list[str], ATOMIC_LIST] | None = None
    """Values for In and NotIn (must be non-empty); must be empty for Exists and DoesNotExist."""


class LabelSelector(Model):
    """Selects objects by their labels; all requirements must hold (AND)."""

    # Kubernetes replaces a selector as a whole when merging, never field by field.
    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    match_labels: dict[str, str] | None = None
    """Labels that must be present with exactly these values."""
    match_expressions: Annotated[list[LabelSelectorRequirement], ATOMIC_LIST] | None = None
    """Further requirements on labels."""
