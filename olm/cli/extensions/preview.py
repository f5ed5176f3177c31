"""What `install` and `upgrade` print before they act, and why they would not proceed (pure functions).

For people: a header block (bundle, catalog, install mode, deprecations), a KIND/NAME/NAMESPACE table
of the objects and one verdict line per preflight. For scripts (`-o json|yaml`): the same as data,
with the objects in full. `blockers` says, one phrase each, why operator-controller would refuse
the previewed rollout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from olm.cli import render
from olm.cli.packages.upgradepath import UpgradePath
from olm.pipeline.plan import Plan
from olm.pipeline.preflight.verdicts import Collisions, CRDSafety, Permissions
from olm.registryv1 import ALL_NAMESPACES

__all__ = [
    "blockers",
    "install_mode_text",
    "object_rows",
    "plan_data",
    "plan_text",
]


def install_mode_text(plan: Plan) -> str:
    if plan.install_mode == ALL_NAMESPACES:
        return f"{ALL_NAMESPACES} (watches all namespaces)"
    return f"{plan.install_mode} (watches namespace {plan.watch_namespace})"


def object_rows(objects: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """KIND, NAME, NAMESPACE of each object, in the order operator-controller would apply them."""
    return [
        [
            str(o.get("kind", "")),
            str((o.get("metadata") or {}).get("name", "")),
            str((o.get("metadata") or {}).get("namespace", "")),
        ]
        for o in objects
    ]


def _deprecations(plan: Plan) -> list[str]:
    found = plan.deprecation
    out = [f"package: {found.package}"] if found.package is not None else []
    out += [f"channel {name}: {message}" for name, message in found.channels]
    if found.bundle is not None:
        out.append(f"bundle: {found.bundle}")
    return out


def _crd_line(safety: CRDSafety) -> list[str]:
    if safety.not_checked is not None:
        return [f"not checked: {safety.not_checked}"]
    if safety.problems:
        lines = [f"UNSAFE: operator-controller would refuse to replace {len(safety.problems)} CRD(s):"]
        for problem in safety.problems:
            lines += ["  " + line for line in problem.splitlines()]
        return lines
    if not safety.new and not safety.existing:
        return ["safe (the bundle has no CRDs)"]
    parts = []
    if safety.existing:
        parts.append(f"{len(safety.existing)} existing CRD(s) replaced compatibly")
    if safety.new:
        parts.append(f"{len(safety.new)} new CRD(s)")
    return [f"safe ({', '.join(parts)})"]


def _permission_line(result: Permissions) -> list[str]:
    who = f"ServiceAccount {result.namespace}/{result.service_account}"
    if not result.exists:
        return [f"{who} does not exist (operator-controller would wait for it)"]
    if result.not_checked is not None:
        return [f"not checked: {result.not_checked}"]
    if not result.missing:
        return [f"{who} may manage every object (preflight passed)"]
    return [f"MISSING: {who} lacks these permissions:", *("  " + line for line in result.missing)]


def _collision_line(result: Collisions) -> list[str]:
    if result.not_checked is not None:
        return [f"not checked: {result.not_checked}"]
    if not result.conflicts:
        return ["none (no object is controlled by another owner)"]
    count = len(result.conflicts)
    return [f"COLLISION: the rollout would wait on {count} object(s):", *("  " + c for c in result.conflicts)]


def _field_block(fields: Sequence[tuple[str, str]]) -> list[str]:
    width = max(len(name) for name, _ in fields) + 2
    return [f"{name + ':':<{width}}{value}" for name, value in fields if value]


def plan_text(
    plan: Plan,
    *,
    permissions: Permissions | None,
    permissions_note: str = "",
    path: UpgradePath | None = None,
    channels: Sequence[str] = (),
) -> str:
    """The preview for people, with the plan's preflight verdicts; `permissions` is the plan's or
    one checked again later, and `permissions_note` replaces the permission line when the check was
    not run (e.g. the ServiceAccount is still to be created)."""
    bundle = plan.bundle
    fields = [
        ("Package", bundle.package),
        ("Bundle", bundle.name),
        ("Version", bundle.version),
        ("Catalog", bundle.catalog or "none (a bundle image)"),
        ("Image", plan.image),
        ("Namespace", plan.install_namespace),
        ("Install mode", install_mode_text(plan)),
    ]
    if path is not None:
        fields.insert(1, ("Installed", f"{path.installed} ({path.installed_version})"))
        fields.append(("Upgrade", path.explain(channels)))
    lines = _field_block(fields)
    deprecated = _deprecations(plan)
    if deprecated:
        lines.append("Deprecated:")
        lines += ["  " + line for line in deprecated]
    lines.append("")
    lines.append(f"Objects ({len(plan.objects)}):")
    lines += [
        "  " + line
        for line in render.table(["KIND", "NAME", "NAMESPACE"], object_rows(plan.objects)).splitlines()
    ]
    lines.append("")
    checks = []
    if plan.crd_safety is not None:
        checks.append(("CRD upgrade safety", _crd_line(plan.crd_safety)))
    if permissions is not None:
        checks.append(("Permissions", _permission_line(permissions)))
    elif permissions_note:
        checks.append(("Permissions", [permissions_note]))
    if plan.collisions is not None:
        checks.append(("Collisions", _collision_line(plan.collisions)))
    width = max(len(name) for name, _ in checks) + 2
    for name, check_lines in checks:
        lines.append(f"{name + ':':<{width}}{check_lines[0]}")
        lines += ["  " + line for line in check_lines[1:]]
    return "\n".join(lines) + "\n"


def plan_data(
    plan: Plan,
    *,
    permissions: Permissions | None,
    path: UpgradePath | None = None,
) -> dict[str, Any]:
    """The preview for scripts, objects in full."""
    bundle = plan.bundle
    data: dict[str, Any] = {
        "bundle": {
            "package": bundle.package,
            "name": bundle.name,
            "version": bundle.version,
            "catalog": bundle.catalog,
            "image": plan.image,
        },
        "namespace": plan.install_namespace,
        "installMode": plan.install_mode,
        "watchNamespace": plan.watch_namespace,
        "deprecations": _deprecations(plan),
    }
    if path is not None:
        data["upgrade"] = path.to_dict()
    data["preflight"] = {
        "crdUpgradeSafety": plan.crd_safety.to_dict() if plan.crd_safety is not None else None,
        "permissions": permissions.to_dict() if permissions is not None else None,
        "collisions": plan.collisions.to_dict() if plan.collisions is not None else None,
    }
    data["objects"] = plan.objects
    return data


def blockers(
    crd_safety: CRDSafety | None,
    permissions: Permissions | None,
    collisions: Collisions | None,
    path: UpgradePath | None = None,
) -> list[str]:
    """Why operator-controller would refuse the previewed rollout, one short phrase each."""
    found = []
    if path is not None and path.needs_self_certified:
        found.append("the target is not a direct successor (pass --self-certified to allow it)")
    if crd_safety is not None and crd_safety.problems:
        found.append(f"CRD upgrade safety fails for {len(crd_safety.problems)} CRD(s)")
    if permissions is not None and not permissions.exists:
        found.append(
            f"ServiceAccount {permissions.namespace}/{permissions.service_account} does not exist"
            " (create it, or pass --create-service-account)"
        )
    if permissions is not None and permissions.missing:
        found.append(
            f"ServiceAccount {permissions.namespace}/{permissions.service_account} lacks "
            f"{len(permissions.missing)} permission(s) (see `olmctl rbac`)"
        )
    if collisions is not None and collisions.conflicts:
        found.append(
            f"{len(collisions.conflicts)} object(s) are controlled by another owner: "
            + "; ".join(collisions.conflicts)
        )
    return found
