"""CRD upgrade safety: would replacing an existing CRD with a bundle's version break stored objects or
existing clients?

Three groups of checks, as upstream runs them through crdify:

- whole CRD: `scope` changed, `storedVersionRemoval` (a version in `status.storedVersions` is gone),
  `existingFieldRemoval` (a property path of an existing version is gone);
- same version (old v1 against new v1), per changed property: `default`, `enum`, `maximum`/`maxItems`/
  `maxLength`/`maxProperties`, `minimum`/`minItems`/`minLength`/`minProperties`, `nullable`, `oneOf`,
  `pattern`, `required`, `type`, and `unhandled` for any other change;
- served versions (each pair of served versions of the new CRD, e.g. v1 -> v2, must be compatible),
  reporting only problems the existing CRD did not already have, and skipped when the new CRD
  converts with a webhook.

`violations(old, new)` lists every problem as `<check>: <message>` (whole CRD),
`<version>: <property>: <check>: <message>` or `<v1> -> <v2>: <property>: <check>: <message>`;
`check(objects, existing)` runs that for each CRD in `objects` that already exists and raises
`CRDUpgradeSafetyError` whose message is upstream's (`validating upgrade for CRD "<name>": ...`,
one line per violation). Whether to enforce (`Strict`) or skip (`None`) is the caller's decision.
Messages are sorted (version, property, check), where upstream's order varies from run to run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from olm.compat.goformat import go_list, go_quote
from olm.pipeline.preflight._properties import compare_property
from olm.pipeline.preflight._schema import flatten, normalise_crd, property_diffs

__all__ = ["CRDUpgradeSafetyError", "check", "error_message", "violations"]


class CRDUpgradeSafetyError(Exception):
    """At least one CRD upgrade is unsafe; `messages` holds one entry per CRD."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = messages


def _versions(crd: dict[str, Any]) -> list[dict[str, Any]]:
    versions: list[dict[str, Any]] = crd["spec"].get("versions") or []
    return versions


def _crd_wide(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out = []
    removed_fields = []
    new_versions = {v["name"]: v for v in _versions(new)}
    old_versions = {v["name"]: v for v in _versions(old)}
    for name, version in new_versions.items():
        if name in old_versions:
            gone = set(flatten(old_versions[name])) - set(flatten(version))
            removed_fields += [f"removed field : {name}.{path}" for path in sorted(gone)]
    out += [f"existingFieldRemoval: {msg}" for msg in removed_fields]
    old_scope, new_scope = old["spec"].get("scope", ""), new["spec"].get("scope", "")
    if old_scope != new_scope:
        out.append(f"scope: scope changed : {go_quote(old_scope)} -> {go_quote(new_scope)}")
    stored = (old.get("status") or {}).get("storedVersions") or []
    removed = [v for v in stored if v not in new_versions]
    if removed:
        out.append(f"storedVersionRemoval: stored versions removed : {go_list(removed)}")
    return out


def _compare_versions(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(property, check, message) for two versions' schemas."""
    diffs = property_diffs(flatten(old), flatten(new))
    return [
        (prop, check, message) for prop in sorted(diffs) for check, message in compare_property(*diffs[prop])
    ]


def _same_version(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    new_versions = {v["name"]: v for v in _versions(new)}
    out = []
    for version in _versions(old):
        if version["name"] in new_versions:
            for prop, check, message in _compare_versions(version, new_versions[version["name"]]):
                out.append(f"{version['name']}: {prop}: {check}: {message}")
    return out


_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STABILITY = {"alpha": 0, "beta": 1, None: 2}


def _kube_version_key(name: str) -> tuple[int, ...]:
    """Sort key of apimachinery's CompareKubeAwareVersionStrings (ascending: alpha, beta, GA)."""
    match = _KUBE_VERSION.match(name)
    if match is None:
        return (0, 0, 0, 0)  # non-kube names sort first (their relative order is reverse-lexical)
    major, stability, minor = match.groups()
    return (1, _STABILITY[stability], int(major), int(minor or 0))


def _served_pairs(crd: dict[str, Any]) -> dict[str, list[tuple[str, str, str]]]:
    served = [v for v in _versions(crd) if v.get("served")]
    plain = sorted(
        (v for v in served if not _KUBE_VERSION.match(v["name"])), key=lambda v: v["name"], reverse=True
    )
    kube = sorted(
        (v for v in served if _KUBE_VERSION.match(v["name"])), key=lambda v: _kube_version_key(v["name"])
    )
    ordered = plain + kube
    return {
        f"{a['name']} -> {b['name']}": _compare_versions(a, b)
        for i, a in enumerate(ordered)
        for b in ordered[i + 1 :]
    }


def _served_versions(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    conversion = new["spec"].get("conversion") or {}
    if conversion.get("strategy") == "Webhook":
        return []
    known = _served_pairs(old)
    out = []
    for pair, results in sorted(_served_pairs(new).items()):
        existing = set(known.get(pair, []))
        out += [
            f"{pair}: {prop}: {check}: {msg}"
            for prop, check, msg in results
            if (prop, check, msg) not in existing
        ]
    return out


def violations(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Every unsafe change from the existing CRD `old` to the bundle's CRD `new`."""
    old_crd, new_crd = normalise_crd(dict(old)), normalise_crd(dict(new))
    return _crd_wide(old_crd, new_crd) + _same_version(old_crd, new_crd) + _served_versions(old_crd, new_crd)


def error_message(old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """Upstream's message for one CRD, or None when the upgrade is safe."""
    found = violations(old, new)
    if not found:
        return None
    name = (new.get("metadata") or {}).get("name", "")
    return f"validating upgrade for CRD {go_quote(name)}: " + "\n".join(found)


def _is_crd(obj: Mapping[str, Any]) -> bool:
    return (
        obj.get("apiVersion") == "apiextensions.k8s.io/v1" and obj.get("kind") == "CustomResourceDefinition"
    )


def check(objects: Iterable[Mapping[str, Any]], existing: Mapping[str, Mapping[str, Any]]) -> None:
    """Raise CRDUpgradeSafetyError when any CRD in `objects` would unsafely replace the CRD of the same
    name in `existing` (name -> CRD as read from the cluster). CRDs not in `existing` are new: safe."""
    messages = []
    for obj in objects:
        if not _is_crd(obj):
            continue
        current = existing.get((obj.get("metadata") or {}).get("name", ""))
        if current is not None:
            message = error_message(current, obj)
            if message is not None:
                messages.append(message)
    if messages:
        raise CRDUpgradeSafetyError(messages)
