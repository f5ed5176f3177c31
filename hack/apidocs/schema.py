"""A CRD's OpenAPI v3 schema as reference sections: each object with fields of its own is a section,
each field a row with its type, whether it is required, its default and its constraints in words.

Constraints are listed where their node is described: an object's own rules (CEL rules across its
fields, atomic map type) under its section, a scalar's or a list's in its row. The items of a list
of objects get a section of their own, named with `[]` (`spec.phases[]`); the values of a map of
objects one named with `.*`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hack.apidocs.inline import code, prose

__all__ = ["Field", "FieldType", "Section", "anchor", "constraints", "field_type", "sections"]

JSON = Mapping[str, Any]


@dataclass(frozen=True)
class FieldType:
    """`prefix` + `base`, where `base` names the section at `section` when there is one."""

    base: str
    prefix: str = ""
    section: str | None = None


@dataclass(frozen=True)
class Field:
    name: str
    path: str
    type: FieldType
    required: bool
    default: str | None
    description: str
    constraints: tuple[str, ...]


@dataclass(frozen=True)
class Section:
    """An object node: `path` is "" for the resource itself."""

    path: str
    description: str
    constraints: tuple[str, ...]
    fields: tuple[Field, ...]


def anchor(path: str) -> str:
    """The HTML id of a section. `a.b[]` cannot meet `a.b.c`: a node is either a list or an object."""
    if not path:
        return "top-level-fields"
    return path.replace("[]", "").replace(".*", "-values").replace(".", "-")


def _has_section(node: JSON) -> bool:
    return bool(node.get("properties"))


def field_type(node: JSON, path: str) -> tuple[FieldType, list[tuple[JSON, str]]]:
    """The type of the node at `path`, and the object nodes under it that need sections of their own."""
    if _has_section(node):
        return FieldType("object", section=path), [(node, path)]
    kind = node.get("type")
    if kind == "array" and isinstance(node.get("items"), Mapping):
        inner, nested = field_type(node["items"], path + "[]")
        return FieldType(inner.base, "list of " + inner.prefix, inner.section), nested
    if kind == "object" and isinstance(node.get("additionalProperties"), Mapping):
        inner, nested = field_type(node["additionalProperties"], path + ".*")
        return FieldType(inner.base, "map of string to " + inner.prefix, inner.section), nested
    if node.get("x-kubernetes-embedded-resource"):
        return FieldType("Kubernetes object"), []
    if node.get("x-kubernetes-int-or-string"):
        return FieldType("integer or string"), []
    if kind == "object" and node.get("x-kubernetes-preserve-unknown-fields"):
        return FieldType("object, any fields"), []
    base = str(kind or "any")
    if "format" in node:
        base += f" ({node['format']})"
    return FieldType(base), []


def value(data: Any) -> str:
    """A schema value (default, enum member) as a code span: strings bare, the rest as JSON."""
    if isinstance(data, str):
        return code(data)
    return code(json.dumps(data, sort_keys=True, separators=(", ", ": ")))


def _range(low: Any, high: Any, one: str, many: str) -> str | None:
    if low is not None and high is not None:
        return f"{low} to {high} {many}"
    if high is not None:
        return f"At most {high} {one if high == 1 else many}"
    if low is not None:
        return f"At least {low} {one if low == 1 else many}"
    return None


# A bound that only restates the integer format's own range says nothing to the reader.
_FORMAT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _numeric_range(node: JSON) -> str | None:
    low, high = node.get("minimum"), node.get("maximum")
    natural = _FORMAT_RANGES.get(str(node.get("format")))
    if natural is not None:
        low = None if low == natural[0] else low
        high = None if high == natural[1] else high
    # OpenAPI v3.0 spells exclusive bounds as booleans next to minimum and maximum.
    low_word = "greater than" if node.get("exclusiveMinimum") is True else "at least"
    high_word = "less than" if node.get("exclusiveMaximum") is True else "at most"
    if low is not None and high is not None:
        if low_word == "at least" and high_word == "at most":
            return f"From {low} to {high}"
        return f"{low_word.capitalize()} {low} and {high_word} {high}"
    if low is not None:
        return f"{low_word.capitalize()} {low}"
    if high is not None:
        return f"{high_word.capitalize()} {high}"
    return None


def _list_type(node: JSON) -> str | None:
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "map":
        keys = ", ".join(code(k) for k in node.get("x-kubernetes-list-map-keys", ()))
        return f"Keyed by {keys}: one entry per key, merged entry by entry on server-side apply"
    if list_type == "set":
        return "A set: each item at most once, merged item by item on server-side apply"
    if list_type == "atomic":
        return "Atomic: server-side apply replaces the whole list"
    return None


def _rule(rule: JSON) -> str:
    expression = code(str(rule.get("rule", "")))
    if "message" in rule:
        return f"{prose(str(rule['message']))} (rule {expression})"
    if "messageExpression" in rule:
        return f"Rule {expression}, message {code(str(rule['messageExpression']))}"
    return f"Rule {expression}"


def constraints(node: JSON) -> list[str]:
    """What the API server enforces on this node itself, one phrase each, in a fixed order."""
    found: list[str | None] = []
    if "enum" in node:
        members = [value(v) for v in node["enum"]]
        found.append(f"Must be {members[0]}" if len(members) == 1 else "One of " + ", ".join(members))
    found.append(_range(node.get("minLength"), node.get("maxLength"), "character", "characters"))
    if "pattern" in node:
        found.append(f"Matches {code(str(node['pattern']))}")
    found.append(_numeric_range(node))
    found.append(_range(node.get("minItems"), node.get("maxItems"), "item", "items"))
    if node.get("uniqueItems"):
        found.append("Items unique")
    found.append(_range(node.get("minProperties"), node.get("maxProperties"), "property", "properties"))
    found.append(_list_type(node))
    if node.get("x-kubernetes-map-type") == "atomic":
        found.append("Atomic: server-side apply replaces the whole object")
    if node.get("nullable"):
        found.append("May be null")
    found.extend(_rule(rule) for rule in node.get("x-kubernetes-validations", ()))
    return [phrase for phrase in found if phrase]


def _row_constraints(node: JSON) -> list[str]:
    """A row's constraints: the node's own, then those of list items and map values that have no
    section to carry them."""
    if _has_section(node):
        return []
    found = constraints(node)
    for key, label in (("items", "Each item"), ("additionalProperties", "Each value")):
        child = node.get(key)
        if isinstance(child, Mapping):
            found.extend(f"{label}: {phrase[0].lower()}{phrase[1:]}" for phrase in _row_constraints(child))
    return found


def _default(node: JSON) -> str | None:
    return value(node["default"]) if "default" in node else None


def sections(root: JSON, *, descriptions: Mapping[str, str] | None = None) -> list[Section]:
    """Every object section under `root`, depth first, fields in schema order.

    `descriptions` fills in fields the schema leaves undescribed (by path), such as `metadata`,
    which the API server describes itself and CRDs may not constrain.
    """
    found: list[Section] = []
    _visit(root, "", descriptions or {}, found)
    return found


def _visit(node: JSON, path: str, descriptions: Mapping[str, str], found: list[Section]) -> None:
    required = set(node.get("required", ()))
    fields: list[Field] = []
    nested: list[tuple[JSON, str]] = []
    for name, child in node.get("properties", {}).items():
        child_path = f"{path}.{name}" if path else name
        kind, under = field_type(child, child_path)
        nested.extend(under)
        fields.append(
            Field(
                name=name,
                path=child_path,
                type=kind,
                required=name in required,
                default=_default(child),
                description=str(child.get("description") or descriptions.get(child_path, "")),
                constraints=tuple(_row_constraints(child)),
            )
        )
    found.append(Section(path, str(node.get("description", "")), tuple(constraints(node)), tuple(fields)))
    for child, child_path in nested:
        _visit(child, child_path, descriptions, found)
