"""Pydantic JSON schema -> Kubernetes structural schema.

Pydantic describes a model in JSON Schema: shared definitions behind `$ref`, optional fields as
`anyOf [T, null]` with `default: null`, titles, `additionalProperties: true` for free-form dicts.
A CRD wants a structural schema: every node self-contained and typed, no references, no
alternatives. This module inlines definitions, collapses the nullable alternatives (an optional
field is simply one that is not required), and keeps only keywords the API server understands.
Kubernetes-only keys that `olm.api.markers` added are kept as they are.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from olm.api.markers import VALIDATIONS_KEY

__all__ = ["structural_schema"]

JSON = dict[str, Any]

_DROPPED = frozenset({"title", "$defs", "examples"})
_CHILD_MAPS = ("properties",)
_CHILD_NODES = ("items",)


def structural_schema(model: type[BaseModel]) -> JSON:
    """The structural OpenAPI v3 schema of `model` (as its JSON form, camelCase keys)."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    defs: Mapping[str, JSON] = raw.get("$defs", {})
    return _convert(raw, defs)


def _convert(node: Mapping[str, Any], defs: Mapping[str, JSON]) -> JSON:
    node = _flatten(node, defs)
    out: JSON = {}
    for key, value in node.items():
        if key in _DROPPED or (key == "default" and value is None):
            continue
        if key == "additionalProperties" and value is True:
            # Free-form objects say so with x-kubernetes-preserve-unknown-fields (a marker); a bare
            # `true` comes from pydantic's extra="allow" and means nothing to the API server.
            continue
        if key == "const":
            out["enum"] = [value]
        elif key == "description":
            out[key] = _unwrap(value)
        elif key in _CHILD_MAPS:
            out[key] = {name: _convert(child, defs) for name, child in value.items()}
        elif key in _CHILD_NODES or (key == "additionalProperties" and isinstance(value, Mapping)):
            out[key] = _convert(value, defs)
        else:
            out[key] = value
    return out


def _unwrap(text: str) -> str:
    """Join hard-wrapped doc string lines so clients (`kubectl explain`) can wrap to their width.

    Blank lines separate paragraphs; a line starting with "- " starts a list item.
    """
    paragraphs: list[list[str]] = [[]]
    for line in inspect.cleandoc(text).splitlines():
        stripped = line.strip()
        if not stripped:
            paragraphs.append([])
        elif stripped.startswith("- ") or not paragraphs[-1]:
            paragraphs[-1].append(stripped)
        else:
            paragraphs[-1][-1] += " " + stripped
    return "\n\n".join("\n".join(p) for p in paragraphs if p)


def _flatten(node: Mapping[str, Any], defs: Mapping[str, JSON]) -> JSON:
    """Resolve `$ref`, single-branch `allOf` and nullable `anyOf` into one node.

    Keys on the referencing node win over the definition's (a field's description is more specific
    than its type's), except CEL rules, which accumulate: type rules first, then field rules.
    """
    node = dict(node)
    if "$ref" in node:
        target = defs[node.pop("$ref").removeprefix("#/$defs/")]
        return _merge(_flatten(target, defs), node)
    if "allOf" in node:
        branches = node.pop("allOf")
        if len(branches) != 1:
            raise ValueError(f"allOf with {len(branches)} branches cannot be made structural")
        return _merge(_flatten(branches[0], defs), node)
    if "anyOf" in node:
        branches = [b for b in node.pop("anyOf") if b != {"type": "null"}]
        if len(branches) != 1:
            raise ValueError(f"anyOf of {branches} cannot be made structural: use one type per field")
        return _merge(_flatten(branches[0], defs), node)
    return node


def _merge(base: JSON, override: JSON) -> JSON:
    merged = {**base, **override}
    rules = [*base.get(VALIDATIONS_KEY, []), *override.get(VALIDATIONS_KEY, [])]
    if rules:
        merged[VALIDATIONS_KEY] = rules
    return merged
