"""CRD version schemas as crdify sees them: Go-normalised, flattened to `^.spec.foo`-style paths."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from olm.compat import gotypes, k8stypes

__all__ = ["flatten", "normalise_crd", "property_diffs", "without_children"]


def normalise_crd(crd: dict[str, Any]) -> dict[str, Any]:
    """The CRD as upstream holds it after decoding into the Go type (unknown fields gone, ...)."""
    result: dict[str, Any] = gotypes.roundtrip(k8stypes.CRD, crd)
    return result


def _walk(schema: Any, path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every schema node with its simple path, in crdify's traversal order."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    items = schema.get("items")
    if isinstance(items, dict):
        yield from _walk(items, f"{path}.items")
    elif isinstance(items, list):
        for i, item in enumerate(items):
            yield from _walk(item, f"{path}.items[{i}]")
    for keyword in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(schema.get(keyword) or []):
            yield from _walk(sub, f"{path}.{keyword}[{i}]")
    yield from _walk(schema.get("not"), f"{path}.not")
    for name, sub in (schema.get("properties") or {}).items():
        yield from _walk(sub, f"{path}.{name}")
    yield from _walk(schema.get("additionalProperties"), f"{path}.additionalProperties")
    for pattern, sub in (schema.get("patternProperties") or {}).items():
        yield from _walk(sub, f"{path}.patternProperties[{pattern}]")
    yield from _walk(schema.get("additionalItems"), f"{path}.additionalItems")
    for name, sub in (schema.get("definitions") or {}).items():
        yield from _walk(sub, f"{path}.definitions[{name}]")
    for name, sub in (schema.get("dependencies") or {}).items():
        yield from _walk(sub, f"{path}.dependencies[{name}]")


def flatten(version: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Path -> schema node for a CRD version (empty when the version has no schema)."""
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    return dict(_walk(schema, "^"))


def without_children(schema: dict[str, Any]) -> dict[str, Any]:
    """A node without `properties` and `items`, so a parent's diff ignores its children's changes."""
    return {k: v for k, v in schema.items() if k not in ("properties", "items")}


def property_diffs(
    old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]
) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Path -> (old node, new node) for every old path whose node changed; removed paths pair with {}."""
    diffs: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for path, old_schema in old.items():
        old_node = without_children(old_schema)
        if path not in new:
            diffs[path] = (old_node, {})
            continue
        new_node = without_children(new[path])
        if old_node != new_node:
            diffs[path] = (old_node, new_node)
    return diffs
