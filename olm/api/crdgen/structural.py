"""Checks that a schema is structural, as the API server requires of CRD schemas.

The API server rejects non-structural schemas at CRD creation with errors that are hard to map back
to a model; checking here turns them into generator failures naming the offending path. Beyond the
rules the server enforces, it flags objects that would silently prune every field.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["violations"]

_ALLOWED = frozenset(
    {
        "type",
        "description",
        "properties",
        "items",
        "required",
        "enum",
        "default",
        "format",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "additionalProperties",
        "x-kubernetes-validations",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
    }
)
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_ROOT_METADATA = {"type": "object"}


def violations(root: Mapping[str, Any]) -> list[str]:
    """Every reason `root` (an openAPIV3Schema) is not structural; empty when it is."""
    properties = dict(root.get("properties", {}))
    # The API server owns metadata's schema; a CRD's root metadata node is only {type: object}.
    metadata = properties.pop("metadata", None)
    found = list(_walk({**root, "properties": properties}, "<root>"))
    if metadata is not None and dict(metadata) != _ROOT_METADATA:
        found.append("metadata: the root metadata schema must be exactly {type: object}")
    return found


def _walk(node: Mapping[str, Any], path: str) -> Iterator[str]:
    for key in sorted(set(node) - _ALLOWED):
        yield f"{path}: keyword {key!r} is not allowed in a structural schema"
    if node.get("type") not in _TYPES:
        yield f"{path}: every node needs a type, got {node.get('type')!r}"
    if "properties" in node and isinstance(node.get("additionalProperties"), Mapping):
        yield f"{path}: properties and additionalProperties are mutually exclusive"
    if node.get("type") == "object":
        yield from _check_object(node, path)
    if node.get("type") == "array":
        yield from _check_array(node, path)
    for rule in node.get("x-kubernetes-validations", []):
        if not rule.get("rule") or not rule.get("message"):
            yield f"{path}: every CEL rule needs a rule and a message"
    for name, child in node.get("properties", {}).items():
        yield from _walk(child, f"{path}.{name}")
    if isinstance(node.get("items"), Mapping):
        yield from _walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), Mapping):
        yield from _walk(node["additionalProperties"], f"{path}{{}}")


def _check_object(node: Mapping[str, Any], path: str) -> Iterator[str]:
    keeps_fields = (
        "properties" in node
        or "additionalProperties" in node
        or node.get("x-kubernetes-preserve-unknown-fields") is True
    )
    if not keeps_fields:
        yield f"{path}: object without properties would have every field pruned"
    missing = set(node.get("required", [])) - set(node.get("properties", {}))
    if missing and not node.get("x-kubernetes-preserve-unknown-fields"):
        yield f"{path}: required fields {sorted(missing)} are not declared"


def _check_array(node: Mapping[str, Any], path: str) -> Iterator[str]:
    if not isinstance(node.get("items"), Mapping):
        yield f"{path}: arrays need an items schema"
        return
    items = node["items"]
    if node.get("x-kubernetes-list-type") == "map":
        keys = node.get("x-kubernetes-list-map-keys", [])
        if not keys:
            yield f"{path}: a map list needs x-kubernetes-list-map-keys"
        if items.get("type") != "object":
            yield f"{path}: a map list needs object items"
        for key in keys:
            if key not in items.get("required", []) and "default" not in items.get("properties", {}).get(
                key, {}
            ):
                yield f"{path}: map key {key!r} must be required or defaulted"
