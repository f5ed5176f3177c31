"""Schema markers: Kubernetes-only schema facts attached to pydantic types.

A pydantic model says what a field holds; a Kubernetes CRD also wants to know how lists merge, which
CEL rules guard a value, which integers are 32-bit and where unknown fields survive pruning. The
markers here carry those facts inside `typing.Annotated` (for fields and list items) or inside a
model's `model_config` (for rules that look at several fields of one object), and they surface as
extra keys in pydantic's JSON schema, which `hack.crdgen` turns into the CRD's structural schema.

Markers never change how pydantic validates or serialises a value; they only add schema keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict, GetJsonSchemaHandler, JsonValue
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = [
    "ATOMIC_LIST",
    "ATOMIC_MAP",
    "EMBEDDED_RESOURCE",
    "INT32",
    "INT64",
    "PRESERVE_UNKNOWN_FIELDS",
    "VALIDATIONS_KEY",
    "ListMap",
    "Rule",
    "SchemaKeys",
    "object_rules",
]

VALIDATIONS_KEY = "x-kubernetes-validations"


@dataclass(frozen=True)
class Rule:
    """A CEL validation rule, emitted under `x-kubernetes-validations`.

    `rule` sees the annotated value as `self` (and, for transition rules, the stored value as
    `oldSelf`); `message` is what the API server returns when the rule is false, so it must say
    what to change.
    """

    rule: str
    message: str

    def as_json(self) -> dict[str, str]:
        return {"rule": self.rule, "message": self.message}

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        # A fresh list: the dict may have been built from another marker's output.
        schema[VALIDATIONS_KEY] = [*schema.get(VALIDATIONS_KEY, []), self.as_json()]
        return schema


@dataclass(frozen=True)
class SchemaKeys:
    """Literal keys merged into the schema of the annotated type (`format`, `x-kubernetes-*`)."""

    keys: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, **keys: Any) -> SchemaKeys:
        return cls(tuple(sorted(keys.items())))

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        # Values are stored as tuples so markers stay hashable; JSON wants lists.
        schema.update({k: list(v) if isinstance(v, tuple) else v for k, v in self.keys})
        return schema


def ListMap(*keys: str) -> SchemaKeys:
    """A list merged as a map keyed by `keys`; each key must be required in the item schema."""
    return SchemaKeys.of(**{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys})


ATOMIC_LIST = SchemaKeys.of(**{"x-kubernetes-list-type": "atomic"})
"""A list replaced as a whole by server-side apply."""

ATOMIC_MAP = SchemaKeys.of(**{"x-kubernetes-map-type": "atomic"})
"""An object replaced as a whole by server-side apply (label selectors)."""

PRESERVE_UNKNOWN_FIELDS = SchemaKeys.of(**{"x-kubernetes-preserve-unknown-fields": True})
"""Free-form object: the API server keeps every field instead of pruning it."""

EMBEDDED_RESOURCE = SchemaKeys.of(
    **{"x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True}
)
"""A whole Kubernetes object (apiVersion, kind, metadata required) kept verbatim."""

INT32 = SchemaKeys.of(format="int32")
INT64 = SchemaKeys.of(format="int64")


def object_rules(*rules: Rule) -> ConfigDict:
    """`model_config` carrying CEL rules that see the whole object as `self`."""
    validations: list[JsonValue] = [dict(r.as_json()) for r in rules]
    return ConfigDict(json_schema_extra={VALIDATIONS_KEY: validations})
