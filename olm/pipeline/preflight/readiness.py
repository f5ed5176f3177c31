"""Whether the installed operator lets an update replace it now (roadmap F25).

The operator says so in its OperatorCondition (OLM v0's contract, `spec.upgrade.readiness`): a
condition it sets in `spec.conditions`, or an administrator forces in `spec.overrides` (which win,
type by type, as in OLM v0). `Upgradeable` False holds every update. For the roadmap's distinction
by semantic version, `MinorUpgradeable` False holds minor and major updates but lets patches
through, and `MajorUpgradeable` False holds major updates only. A missing object or condition
holds nothing: an operator that never spoke has not objected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from olm import semver
from olm.api import names
from olm.pipeline.resolve import update_class

__all__ = ["NotReady", "not_ready"]


@dataclass(frozen=True, kw_only=True)
class NotReady:
    """The condition that holds an update."""

    type: str
    reason: str
    message: str
    overridden: bool
    """Set by an administrator in `spec.overrides`, not by the operator."""


def _holds(kind: str, update: str) -> bool:
    if kind == names.UPGRADEABLE:
        return True
    if kind == names.MINOR_UPGRADEABLE:
        return update != "patch"
    return kind == names.MAJOR_UPGRADEABLE and update in ("major", "downgrade")


def _conditions(spec: Mapping[str, Any], key: str) -> dict[str, Mapping[str, Any]]:
    listed = spec.get(key) or ()
    return {str(c.get("type")): c for c in listed if isinstance(c, Mapping)}


def not_ready(
    operator_condition: Mapping[str, Any] | None, installed: str, candidate: str
) -> NotReady | None:
    """The condition of `operator_condition` (None when there is none) that holds the update from
    version `installed` to `candidate`, or None when nothing does."""
    if operator_condition is None:
        return None
    spec = operator_condition.get("spec") or {}
    overrides = _conditions(spec, "overrides")
    effective = {**_conditions(spec, "conditions"), **overrides}
    update = update_class(semver.parse_version(installed), semver.parse_version(candidate))
    for kind in (names.UPGRADEABLE, names.MINOR_UPGRADEABLE, names.MAJOR_UPGRADEABLE):
        condition = effective.get(kind)
        if condition is not None and condition.get("status") == "False" and _holds(kind, update):
            return NotReady(
                type=kind,
                reason=str(condition.get("reason") or ""),
                message=str(condition.get("message") or ""),
                overridden=kind in overrides,
            )
    return None
