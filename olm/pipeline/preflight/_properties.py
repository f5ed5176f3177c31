"""Property comparisons: each check inspects one schema keyword of a changed property, reports a
breaking change in crdify's words, and takes the keyword out of the comparison; whatever differs
after all checks is an "unhandled" change (fail closed).

OLM's configuration: `description` changes are ignored, `enum` additions are allowed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olm.compat import gojson
from olm.compat.goformat import go_list, go_quote, go_value

__all__ = ["CHECKS", "compare_property"]

Check = Callable[[dict[str, Any], dict[str, Any]], str | None]


def _raw(value: Any) -> str:
    """A JSON value's bytes as the Go type holds them (json.RawMessage): canonical compact JSON."""
    return gojson.dumps(value, sort_keys=True)


def _default(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    a, b = old.pop("default", None), new.pop("default", None)
    if a is None and b is not None:
        return f"default added when there was none previously : {go_quote(_raw(b))}"
    if a is not None and b is None:
        return f"default value removed : {go_quote(_raw(a))}"
    if a is not None and b is not None and _raw(a) != _raw(b):
        return f"default value changed : {go_quote(_raw(a))} -> {go_quote(_raw(b))}"
    return None


def _set_check(keyword: str, added_msg: str, removed_msg: str) -> Check:
    def check(old: dict[str, Any], new: dict[str, Any]) -> str | None:
        a = {_raw(v) for v in old.pop(keyword, None) or []}
        b = {_raw(v) for v in new.pop(keyword, None) or []}
        if not a and b:
            return f"{added_msg} : {go_list(sorted(b))}"
        if a - b:
            return f"{removed_msg} : {go_list(sorted(a - b))}"
        return None

    return check


def _bound(keyword: str, kind: str, as_float: bool) -> Check:
    """maximum/maxItems/...: adding one or tightening it breaks; minimum-style checks mirror it."""

    def check(old: dict[str, Any], new: dict[str, Any]) -> str | None:
        a, b = old.pop(keyword, None), new.pop(keyword, None)
        if b is None:
            return None
        fmt = (lambda v: go_value(float(v))) if as_float else go_value
        if a is None:
            return f"{kind} constraint added when there was none previously : {fmt(b)}"
        if (kind == "maximum" and b < a) or (kind == "minimum" and b > a):
            verb = "decreased" if kind == "maximum" else "increased"
            return f"{kind} {verb} : {fmt(a)} -> {fmt(b)}"
        return None

    return check


def _required(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    added = set(new.pop("required", None) or []) - set(old.pop("required", None) or [])
    return f"new required fields: {go_list(sorted(added))}" if added else None


def _type(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    a, b = old.pop("type", ""), new.pop("type", "")
    return f"type changed : {go_quote(a)} -> {go_quote(b)}" if a != b else None


def _description(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    old.pop("description", None)
    new.pop("description", None)
    return None  # OLM sets this validation's enforcement to None


def _pattern(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    a, b = old.pop("pattern", ""), new.pop("pattern", "")
    if a == b:
        return None
    if not a:
        return f"pattern added : {go_quote(a)} -> {go_quote(b)}"
    if not b:
        return f"pattern removed : {go_quote(a)} -> {go_quote(b)}"
    return f"pattern changed : {go_quote(a)} -> {go_quote(b)}"


def _nullable(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    a, b = bool(old.pop("nullable", False)), bool(new.pop("nullable", False))
    if a == b:
        return None
    verb = "added" if b else "removed"
    return f"nullable {verb} : {str(a).lower()} -> {str(b).lower()}"


CHECKS: dict[str, Check] = {
    "default": _default,
    "description": _description,
    "enum": _set_check(
        "enum", "enum constraint added when there was none previously", "allowed enum values removed"
    ),
    "maxItems": _bound("maxItems", "maximum", False),
    "maxLength": _bound("maxLength", "maximum", False),
    "maxProperties": _bound("maxProperties", "maximum", False),
    "maximum": _bound("maximum", "maximum", True),
    "minItems": _bound("minItems", "minimum", False),
    "minLength": _bound("minLength", "minimum", False),
    "minProperties": _bound("minProperties", "minimum", False),
    "minimum": _bound("minimum", "minimum", True),
    "nullable": _nullable,
    "oneOf": _set_check("oneOf", "oneOf constraint added", "allowed oneOf schemas removed"),
    "pattern": _pattern,
    "required": _required,
    "type": _type,
}

# JSON name -> Go field name of JSONSchemaProps, in declaration order (for "unhandled" details).
_GO_FIELDS = {
    "id": "ID",
    "$schema": "Schema",
    "$ref": "Ref",
    "format": "Format",
    "title": "Title",
    "exclusiveMaximum": "ExclusiveMaximum",
    "exclusiveMinimum": "ExclusiveMinimum",
    "uniqueItems": "UniqueItems",
    "multipleOf": "MultipleOf",
    "allOf": "AllOf",
    "anyOf": "AnyOf",
    "not": "Not",
    "additionalProperties": "AdditionalProperties",
    "patternProperties": "PatternProperties",
    "dependencies": "Dependencies",
    "additionalItems": "AdditionalItems",
    "definitions": "Definitions",
    "externalDocs": "ExternalDocs",
    "example": "Example",
    "x-kubernetes-preserve-unknown-fields": "XPreserveUnknownFields",
    "x-kubernetes-embedded-resource": "XEmbeddedResource",
    "x-kubernetes-int-or-string": "XIntOrString",
    "x-kubernetes-list-map-keys": "XListMapKeys",
    "x-kubernetes-list-type": "XListType",
    "x-kubernetes-map-type": "XMapType",
    "x-kubernetes-validations": "XValidations",
}
_POINTERS = frozenset(
    {
        "$ref",
        "multipleOf",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
    }
)
_ZERO: dict[str, str] = {"exclusiveMaximum": "false", "exclusiveMinimum": "false", "uniqueItems": "false"}
_ZERO.update({k: "false" for k in ("x-kubernetes-embedded-resource", "x-kubernetes-int-or-string")})
_ZERO.update({k: '""' for k in ("id", "$schema", "format", "title")})


def _go_cmp_value(key: str, value: Any) -> str:
    """Roughly how go-cmp prints a field's value, condensed as upstream condenses it."""
    if value is None:
        return _ZERO.get(key, "nil")
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = go_quote(value)
    elif isinstance(value, int | float):
        text = go_value(float(value))
    else:
        return "<complex value>"
    return "&" + text if key in _POINTERS else text


def _unhandled(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    if old == new:
        return None
    details = []
    for key, go_name in _GO_FIELDS.items():
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        before, after = _go_cmp_value(key, a), _go_cmp_value(key, b)
        if before == after:
            after += " (changed)"
        details.append(f"{go_name} {before} -> {after}")
    summary = "unhandled changes found"
    return f"{summary} ({'; '.join(details)})" if details else summary


def compare_property(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str]]:
    """(check name, message) for every breaking change between two versions of one property, sorted
    by check name, "unhandled" last."""
    old, new = dict(old), dict(new)
    results = [(name, msg) for name, check in CHECKS.items() if (msg := check(old, new)) is not None]
    unhandled = _unhandled(old, new)
    if unhandled is not None:
        results.append(("unhandled", unhandled))
    return results
