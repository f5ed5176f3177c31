"""Progression probes: custom readiness checks for the objects of a ClusterObjectSet.

A probe selects objects (by group and kind, or by labels) and asserts on each selected object: a
condition has a status, two fields are equal, or a field has a value. A phase is ready when every
object passes every probe that selects it; a probe that selects nothing in a phase passes.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field

from olm.api import rules
from olm.api.base import Model
from olm.api.markers import ATOMIC_LIST, Rule, object_rules
from olm.api.meta import LabelSelector

__all__ = [
    "Assertion",
    "AssertionType",
    "ConditionEqualProbe",
    "ExpectedConditionStatus",
    "FieldValueProbe",
    "FieldsEqualProbe",
    "GroupKind",
    "ObjectSelector",
    "ProgressionProbe",
    "ProgressionProbes",
    "SelectorType",
]

FieldPath = Annotated[
    str,
    Field(min_length=1, max_length=200),
    rules.matches(
        rules.FIELD_PATH,
        "field path must be letters and digits in parts separated by '.', such as status.phase",
    ),
]


ExclusiveLabelSelector = Annotated[
    LabelSelector,
    Rule(
        "has(self.matchLabels) != has(self.matchExpressions)",
        "exactly one of matchLabels or matchExpressions must be set",
    ),
]


def _union(discriminator: str, value: str, member: str) -> Rule:
    return Rule(
        f"self.{discriminator} == '{value}' ? has(self.{member}) : !has(self.{member})",
        f"{member} is required when {discriminator} is {value}, and must not be set otherwise",
    )


class SelectorType(StrEnum):
    """How a probe selects objects."""

    GROUP_KIND = "GroupKind"
    LABEL = "Label"


class GroupKind(Model):
    """An API group and kind, such as `apps` and `Deployment` (the core group is empty)."""

    group: Annotated[str, Field(max_length=253)]
    """The API group; empty for the core group."""
    kind: Annotated[str, Field(min_length=1, max_length=63)]
    """The kind."""


class ObjectSelector(Model):
    """Which objects a probe applies to; `type` says which of the other fields is set."""

    model_config = object_rules(
        _union("type", SelectorType.GROUP_KIND, "groupKind"),
        _union("type", SelectorType.LABEL, "label"),
    )

    type: SelectorType
    """`GroupKind` selects by `groupKind`; `Label` selects by `label`."""
    group_kind: GroupKind | None = None
    """Selects every object of this group and kind."""
    label: ExclusiveLabelSelector | None = None
    """Selects every object whose labels match; set exactly one of matchLabels and
    matchExpressions. Objects of different kinds rarely share a schema, so a label that spans
    kinds makes field assertions fail."""


class AssertionType(StrEnum):
    """What an assertion checks."""

    CONDITION_EQUAL = "ConditionEqual"
    FIELDS_EQUAL = "FieldsEqual"
    FIELD_VALUE = "FieldValue"


class ExpectedConditionStatus(StrEnum):
    """The condition status a ConditionEqual assertion expects."""

    TRUE = "True"
    FALSE = "False"


class ConditionEqualProbe(Model):
    """The object has a condition of `type` with `status`."""

    type: Annotated[str, Field(min_length=1, max_length=200)]
    """Condition type, such as `Ready`."""
    status: ExpectedConditionStatus
    """Expected status: `True` or `False`."""


class FieldsEqualProbe(Model):
    """Two fields of the object hold equal values; fails when either is missing."""

    field_a: FieldPath
    """Path of the first field, such as `spec.replicas`."""
    field_b: FieldPath
    """Path of the second field, such as `status.readyReplicas`."""


class FieldValueProbe(Model):
    """A field of the object holds a value; fails when the field is missing."""

    field_path: FieldPath
    """Path of the field, such as `status.phase`."""
    value: Annotated[str, Field(min_length=1, max_length=200)]
    """Expected value, such as `Bound`."""


class Assertion(Model):
    """One check on a selected object; `type` says which of the other fields is set."""

    model_config = object_rules(
        _union("type", AssertionType.CONDITION_EQUAL, "conditionEqual"),
        _union("type", AssertionType.FIELDS_EQUAL, "fieldsEqual"),
        _union("type", AssertionType.FIELD_VALUE, "fieldValue"),
    )

    type: AssertionType
    """`ConditionEqual`, `FieldsEqual` or `FieldValue`."""
    condition_equal: ConditionEqualProbe | None = None
    """The expected condition."""
    fields_equal: FieldsEqualProbe | None = None
    """The two fields expected to be equal."""
    field_value: FieldValueProbe | None = None
    """The field and its expected value."""


class ProgressionProbe(Model):
    """A selector and the assertions every selected object must pass."""

    selector: ObjectSelector
    """Which objects the assertions apply to."""
    assertions: Annotated[list[Assertion], Field(min_length=1, max_length=20), ATOMIC_LIST]
    """1 to 20 checks, all of which must pass."""


ProgressionProbes = Annotated[list[ProgressionProbe], Field(min_length=1, max_length=20), ATOMIC_LIST]
"""1 to 20 probes."""
