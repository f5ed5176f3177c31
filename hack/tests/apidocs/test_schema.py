"""The schema walk: one section per object with fields, types and constraints in words, each
constraint listed where its node is described."""

from __future__ import annotations

from typing import Any

import pytest

from hack.apidocs.schema import FieldType, anchor, constraints, field_type, sections

SCHEMA: dict[str, Any] = {
    "description": "The resource.",
    "type": "object",
    "required": ["spec"],
    "properties": {
        "spec": {
            "description": "Desired state.",
            "type": "object",
            "required": ["mode"],
            "x-kubernetes-validations": [{"rule": "has(self.mode)", "message": "mode is required"}],
            "properties": {
                "mode": {"type": "string", "enum": ["Fast", "Safe"], "default": "Safe"},
                "items": {
                    "description": "The items.",
                    "type": "array",
                    "maxItems": 5,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "description": "One item.",
                        "type": "object",
                        "required": ["name"],
                        "properties": {"name": {"type": "string", "maxLength": 63}},
                    },
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
                },
                "after": {"type": "integer", "format": "int32", "minimum": 0},
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


def test_sections_are_depth_first_and_list_items_get_their_own() -> None:
    assert [s.path for s in sections(SCHEMA)] == ["", "spec", "spec.items[]", "status"]


def test_fields_keep_schema_order_and_say_what_is_required() -> None:
    spec = sections(SCHEMA)[1]
    assert [(f.name, f.path, f.required) for f in spec.fields] == [
        ("mode", "spec.mode", True),
        ("items", "spec.items", False),
        ("tags", "spec.tags", False),
        ("after", "spec.after", False),
    ]


def test_types_name_the_section_that_describes_them() -> None:
    root, spec = sections(SCHEMA)[:2]
    types = {f.name: f.type for f in (*root.fields, *spec.fields)}
    assert types["spec"] == FieldType("object", section="spec")
    assert types["items"] == FieldType("object", "list of ", "spec.items[]")
    assert types["tags"] == FieldType("string", "list of ")
    assert types["after"] == FieldType("integer (int32)")
    assert types["mode"] == FieldType("string")


def test_an_objects_own_rules_go_to_its_section_not_its_row() -> None:
    root, spec = sections(SCHEMA)[:2]
    assert spec.constraints == ("mode is required (rule `has(self.mode)`)",)
    assert next(f for f in root.fields if f.name == "spec").constraints == ()


def test_a_rows_constraints_include_those_of_scalar_items() -> None:
    spec = sections(SCHEMA)[1]
    rows = {f.name: f for f in spec.fields}
    assert rows["tags"].constraints == ("Each item: at least 1 character", "Each item: matches `^[a-z]+$`")
    assert rows["items"].constraints == (
        "At most 5 items",
        "Keyed by `name`: one entry per key, merged entry by entry on server-side apply",
    )
    assert rows["mode"].default == "`Safe`"
    assert rows["mode"].constraints == ("One of `Fast`, `Safe`",)
    assert rows["after"].constraints == ("At least 0",)


def test_list_item_sections_carry_the_item_description() -> None:
    item = sections(SCHEMA)[2]
    assert item.description == "One item."
    assert [(f.name, f.required, f.constraints) for f in item.fields] == [
        ("name", True, ("At most 63 characters",))
    ]


def test_descriptions_fill_in_undescribed_fields_only() -> None:
    schema = {"properties": {"metadata": {"type": "object"}, "spec": {"type": "string", "description": "S."}}}
    root = sections(schema, descriptions={"metadata": "Object metadata.", "spec": "ignored"})[0]
    assert [f.description for f in root.fields] == ["Object metadata.", "S."]


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        pytest.param(
            {"type": "object", "additionalProperties": {"type": "string"}},
            FieldType("string", "map of string to "),
            id="map",
        ),
        pytest.param(
            {
                "type": "object",
                "x-kubernetes-embedded-resource": True,
                "x-kubernetes-preserve-unknown-fields": True,
            },
            FieldType("Kubernetes object"),
            id="embedded",
        ),
        pytest.param(
            {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            FieldType("object, any fields"),
            id="free-form",
        ),
        pytest.param(
            {"x-kubernetes-int-or-string": True}, FieldType("integer or string"), id="int-or-string"
        ),
        pytest.param(
            {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
            FieldType("string", "list of list of "),
            id="nested-lists",
        ),
        pytest.param({"type": "string", "format": "date-time"}, FieldType("string (date-time)"), id="format"),
        pytest.param({}, FieldType("any"), id="untyped"),
    ],
)
def test_field_types(node: dict[str, Any], expected: FieldType) -> None:
    assert field_type(node, "x")[0] == expected


def test_a_map_of_objects_gets_a_values_section() -> None:
    node = {
        "type": "object",
        "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}},
    }
    kind, nested = field_type(node, "spec.byName")
    assert kind == FieldType("object", "map of string to ", "spec.byName.*")
    assert [path for _, path in nested] == ["spec.byName.*"]
    assert anchor("spec.byName.*") == "spec-byName-values"


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        pytest.param({"enum": ["Only"]}, ["Must be `Only`"], id="single-enum"),
        pytest.param({"enum": ["True", 1]}, ["One of `True`, `1`"], id="enum"),
        pytest.param({"minLength": 1, "maxLength": 63}, ["1 to 63 characters"], id="length"),
        pytest.param({"maxLength": 1}, ["At most 1 character"], id="one-character"),
        pytest.param({"minimum": 10, "maximum": 720}, ["From 10 to 720"], id="range"),
        pytest.param({"minimum": 0, "exclusiveMinimum": True}, ["Greater than 0"], id="exclusive"),
        pytest.param(
            {"minimum": 0, "maximum": 1, "exclusiveMaximum": True},
            ["At least 0 and less than 1"],
            id="half-open",
        ),
        pytest.param({"maximum": 9}, ["At most 9"], id="maximum"),
        pytest.param(
            {"format": "int32", "minimum": 1, "maximum": 2**31 - 1}, ["At least 1"], id="int32-maximum-unsaid"
        ),
        pytest.param(
            {"format": "int64", "minimum": -(2**63), "maximum": 2**63 - 1}, [], id="int64-range-unsaid"
        ),
        pytest.param({"minItems": 1}, ["At least 1 item"], id="items"),
        pytest.param({"minProperties": 1}, ["At least 1 property"], id="properties"),
        pytest.param(
            {"uniqueItems": True, "x-kubernetes-list-type": "set"},
            ["Items unique", "A set: each item at most once, merged item by item on server-side apply"],
            id="set",
        ),
        pytest.param(
            {"x-kubernetes-list-type": "atomic"},
            ["Atomic: server-side apply replaces the whole list"],
            id="atomic-list",
        ),
        pytest.param(
            {"x-kubernetes-map-type": "atomic"},
            ["Atomic: server-side apply replaces the whole object"],
            id="atomic-map",
        ),
        pytest.param({"nullable": True}, ["May be null"], id="nullable"),
        pytest.param(
            {"x-kubernetes-validations": [{"rule": "self == oldSelf"}]}, ["Rule `self == oldSelf`"], id="rule"
        ),
        pytest.param(
            {"x-kubernetes-validations": [{"rule": "self.a", "messageExpression": "'bad ' + self.b"}]},
            ["Rule `self.a`, message `'bad ' + self.b`"],
            id="message-expression",
        ),
        pytest.param(
            {"x-kubernetes-validations": [{"rule": "a || b", "message": "need <a> or b"}]},
            ["need &lt;a&gt; or b (rule `a || b`)"],
            id="message-escaped",
        ),
        pytest.param({"type": "string", "description": "no rules"}, [], id="none"),
    ],
)
def test_constraints_in_words(node: dict[str, Any], expected: list[str]) -> None:
    assert constraints(node) == expected


def test_anchors_drop_list_markers_and_join_with_dashes() -> None:
    assert anchor("") == "top-level-fields"
    assert anchor("spec.phases[].objects[].ref") == "spec-phases-objects-ref"
