"""operator-controller's two preflights, run by olmctl against the live cluster before it installs or
upgrades: CRD upgrade safety and the installer ServiceAccount's permissions.

Both call the same functions operator-controller calls (`preflight.crdupgradesafety.check`,
`preflight.permissions.missing_permissions`) on the same objects, so a preview that passes here
passes there. A check olmctl cannot run (the user may not read CRDs or create SubjectAccessReviews)
is reported as not checked, with the reason, rather than failing the command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.operator_controller.preflight import crdupgradesafety, permissions
from olm_runtime.client import Client, errors, kinds

__all__ = ["CRDSafety", "Permissions", "check_crd_safety", "check_permissions"]


@dataclass(frozen=True, kw_only=True)
class CRDSafety:
    """The CRD upgrade-safety verdict for the CRDs of a rollout."""

    new: tuple[str, ...] = ()
    """CRDs the cluster does not have yet (always safe)."""
    existing: tuple[str, ...] = ()
    """CRDs that exist and would be replaced."""
    problems: tuple[str, ...] = ()
    """operator-controller's messages, one per unsafe CRD."""
    not_checked: str | None = None
    """Why the check could not run, when it could not."""

    @property
    def safe(self) -> bool:
        return not self.problems and self.not_checked is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "safe": self.safe,
            "newCRDs": list(self.new),
            "existingCRDs": list(self.existing),
            "problems": list(self.problems),
            "notChecked": self.not_checked,
        }


@dataclass(frozen=True, kw_only=True)
class Permissions:
    """The permission-preflight result for one ServiceAccount."""

    namespace: str
    service_account: str
    exists: bool = True
    missing: tuple[str, ...] = field(default=())
    """Missing permissions in operator-controller's wording, one line per scope."""
    not_checked: str | None = None

    @property
    def ok(self) -> bool:
        return self.exists and not self.missing and self.not_checked is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "serviceAccount": f"{self.namespace}/{self.service_account}",
            "exists": self.exists,
            "ok": self.ok,
            "missing": list(self.missing),
            "notChecked": self.not_checked,
        }


def _crd_names(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        str(o["metadata"]["name"])
        for o in objects
        if o.get("kind") == "CustomResourceDefinition"
        and str(o.get("apiVersion")).startswith("apiextensions")
    ]


async def check_crd_safety(client: Client, objects: Sequence[Mapping[str, Any]]) -> CRDSafety:
    """Compare each CRD of `objects` with the cluster's CRD of that name, as operator-controller does."""
    existing: dict[str, dict[str, Any]] = {}
    new: list[str] = []
    try:
        for name in _crd_names(objects):
            try:
                existing[name] = dict(await client.get(kinds.CUSTOM_RESOURCE_DEFINITION, name))
            except errors.NotFound:
                new.append(name)
    except errors.Forbidden as err:
        return CRDSafety(not_checked=f"cannot read CustomResourceDefinitions: {err}")
    problems: tuple[str, ...] = ()
    try:
        crdupgradesafety.check(objects, existing)
    except crdupgradesafety.CRDUpgradeSafetyError as err:
        problems = tuple(err.messages)
    return CRDSafety(new=tuple(new), existing=tuple(existing), problems=problems)


async def check_permissions(
    client: Client, *, namespace: str, service_account: str, objects: Sequence[Mapping[str, Any]]
) -> Permissions:
    """Whether `namespace/service_account` may roll out `objects`, as operator-controller checks it
    before it creates a revision (one SubjectAccessReview per requirement)."""
    result = Permissions(namespace=namespace, service_account=service_account)
    try:
        await client.get(kinds.SERVICE_ACCOUNT, service_account, namespace=namespace)
    except errors.NotFound:
        return Permissions(namespace=namespace, service_account=service_account, exists=False)
    except errors.Forbidden as err:
        return Permissions(
            namespace=namespace, service_account=service_account, not_checked=f"cannot read it: {err}"
        )
    try:
        missing = await permissions.missing_permissions(
            client, namespace=namespace, service_account=service_account, objects=objects
        )
    except permissions.PermissionCheckError as err:
        return Permissions(namespace=namespace, service_account=service_account, not_checked=str(err))
    if not missing:
        return result
    lines = permissions.error_message(missing).splitlines()[1:]
    return Permissions(
        namespace=namespace, service_account=service_account, missing=tuple(line.strip() for line in lines)
    )
