"""Readiness probes: when an object of a phase counts as ready.

A probe is a selector (group and kind, or labels) and assertions. The built-in probes (`BUILTIN`)
cover the kinds whose readiness Kubernetes reports in status; `spec.progressionProbes` add more.
An object is ready when it passes every assertion of every probe that selects it, and when its
status describes its current generation (`status.observedGeneration`, where the kind reports it).
A probe that selects nothing passes. Everything here is pure: objects in, messages out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BUILTIN",
    "Assertion",
    "ConditionEqual",
    "FieldValue",
    "FieldsEqual",
    "Probe",
    "check",
    "from_spec",
    "object_label",
]

Object = Mapping[str, Any]
_MISSING = object()


def _lookup(obj: Object, path: str) -> Any:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return _MISSING
        current = current[part]
    return current


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class ConditionEqual:
    type: str
    status: str

    def __call__(self, obj: Object) -> str | None:
        conditions = (obj.get("status") or {}).get("conditions") or ()
        condition = next((c for c in conditions if c.get("type") == self.type), None)
        if condition is None:
            return f'missing condition "{self.type}"'
        generation = (obj.get("metadata") or {}).get("generation")
        observed = condition.get("observedGeneration")
        if observed is not None and generation is not None and observed != generation:
            return f'condition "{self.type}" describes generation {observed}, not {generation}'
        if condition.get("status") != self.status:
            return f'condition "{self.type}" is "{condition.get("status")}"; expected: "{self.status}"'
        return None


@dataclass(frozen=True)
class FieldsEqual:
    field_a: str
    field_b: str

    def __call__(self, obj: Object) -> str | None:
        a, b = _lookup(obj, self.field_a), _lookup(obj, self.field_b)
        if a is _MISSING:
            return f'missing key: "{self.field_a}"'
        if b is _MISSING:
            return f'missing key: "{self.field_b}"'
        if a != b:
            return (
                f'"{self.field_a}" != "{self.field_b}"; expected equal got: "{_render(a)}" and "{_render(b)}"'
            )
        return None


@dataclass(frozen=True)
class FieldValue:
    field_path: str
    value: str

    def __call__(self, obj: Object) -> str | None:
        found = _lookup(obj, self.field_path)
        if found is _MISSING:
            return f'missing key: "{self.field_path}"'
        if _render(found) != self.value:
            return (
                f'value at key "{self.field_path}" != "{self.value}"; '
                f'expected: "{self.value}" got: "{_render(found)}"'
            )
        return None


Assertion = ConditionEqual | FieldsEqual | FieldValue


def _group_kind(obj: Object) -> tuple[str, str]:
    api_version = str(obj.get("apiVersion") or "")
    return (api_version.rpartition("/")[0], str(obj.get("kind") or ""))


def _labels_match(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or ():
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or ()
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True


@dataclass(frozen=True)
class Probe:
    selects: Callable[[Object], bool]
    assertions: tuple[Assertion, ...]


def _label_selector(selector: Mapping[str, Any]) -> Callable[[Object], bool]:
    def selects(obj: Object) -> bool:
        return _labels_match(selector, (obj.get("metadata") or {}).get("labels") or {})

    return selects


def by_group_kind(group: str, kind: str, *assertions: Assertion) -> Probe:
    return Probe(lambda obj: _group_kind(obj) == (group, kind), assertions)


_ROLLED_OUT = (FieldsEqual("status.updatedReplicas", "status.replicas"), ConditionEqual("Available", "True"))

BUILTIN: tuple[Probe, ...] = (
    by_group_kind("apiextensions.k8s.io", "CustomResourceDefinition", ConditionEqual("Established", "True")),
    by_group_kind("", "Namespace", FieldValue("status.phase", "Active")),
    by_group_kind("", "PersistentVolumeClaim", FieldValue("status.phase", "Bound")),
    by_group_kind("apps", "Deployment", *_ROLLED_OUT),
    by_group_kind("apps", "StatefulSet", *_ROLLED_OUT),
    by_group_kind("cert-manager.io", "Certificate", ConditionEqual("Ready", "True")),
    by_group_kind("cert-manager.io", "Issuer", ConditionEqual("Ready", "True")),
)
"""The kinds whose readiness is checked without any `spec.progressionProbes`."""


def _assertion(spec: Mapping[str, Any]) -> Assertion:
    kind = spec.get("type")
    if kind == "ConditionEqual":
        c = spec["conditionEqual"]
        return ConditionEqual(str(c["type"]), str(c["status"]))
    if kind == "FieldsEqual":
        f = spec["fieldsEqual"]
        return FieldsEqual(str(f["fieldA"]), str(f["fieldB"]))
    if kind == "FieldValue":
        v = spec["fieldValue"]
        return FieldValue(str(v["fieldPath"]), str(v["value"]))
    raise ValueError(f"unknown assertion type {kind!r}")


def from_spec(probes: Sequence[Mapping[str, Any]] | None) -> tuple[Probe, ...]:
    """The probes of `spec.progressionProbes` (already validated by the CRD schema)."""
    result: list[Probe] = []
    for probe in probes or ():
        selector = probe.get("selector") or {}
        assertions = tuple(_assertion(a) for a in probe.get("assertions") or ())
        if selector.get("type") == "GroupKind":
            gk = selector.get("groupKind") or {}
            result.append(by_group_kind(str(gk.get("group") or ""), str(gk.get("kind") or ""), *assertions))
        else:
            result.append(Probe(_label_selector(dict(selector.get("label") or {})), assertions))
    return tuple(result)


def _observed_generation(obj: Object) -> str | None:
    status = obj.get("status") or {}
    observed = status.get("observedGeneration") if isinstance(status, Mapping) else None
    generation = (obj.get("metadata") or {}).get("generation")
    if observed is not None and generation is not None and observed < generation:
        return f"status describes generation {observed}, not the current {generation}"
    return None


def check(obj: Object, probes: Sequence[Probe]) -> list[str]:
    """What keeps `obj` from being ready: one message per failing check (empty: ready). A check
    that several probes make (a built-in one repeated in `spec.progressionProbes`) is one check."""
    selected = [p for p in probes if p.selects(obj)]
    if not selected:
        return []
    stale = _observed_generation(obj)
    if stale is not None:
        return [stale]
    assertions = dict.fromkeys(a for p in selected for a in p.assertions)  # ordered, without repeats
    return [m for a in assertions if (m := a(obj)) is not None]


def object_label(obj: Object) -> str:
    """`Kind.version.group ns/name`-style label of an object for status messages."""
    api_version = str(obj.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    gv = f"{version}.{group}" if group else version
    metadata = obj.get("metadata") or {}
    where = f"{metadata['namespace']}/" if metadata.get("namespace") else ""
    return f"{obj.get('kind')}.{gv} {where}{metadata.get('name')}"
