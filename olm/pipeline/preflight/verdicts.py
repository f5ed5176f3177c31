"""The preflights run against a live cluster, as verdicts both callers of the pipeline read.

operator-controller turns a failed verdict into its condition (`message` is its wording) and stops
before a revision is created; olmctl prints each verdict, and stops its install too. A check the
caller may not run (olmctl's user may not read CRDs, create SubjectAccessReviews or read the
objects a bundle would apply) is reported as not checked, with the reason, instead of failing.

- `check_crd_safety`: every CRD of the objects against the cluster's CRD of that name (`crdupgradesafety`).
- `check_permissions`: what the extension's ServiceAccount is denied of what the objects need
  (`permissions`), the finalizers of the revision that will own them included when it is named
  (`next_revision` names it for a caller outside operator-controller).
- `check_collisions`: which objects exist and are controlled by something the new revision may not
  take over (the rules of `olm.api.ownership`, under the `Prevent` collision protection every
  ClusterExtension revision uses): what the rollout would otherwise find, and wait on, only once
  it runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import names, ownership
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.api.revisions import owner_selector
from olm.pipeline.preflight import crdupgradesafety, permissions
from olm_runtime import ownerrefs
from olm_runtime.client import Client, GroupVersionKind, errors, kinds

__all__ = [
    "CRDSafety",
    "Collisions",
    "Permissions",
    "check_collisions",
    "check_crd_safety",
    "check_permissions",
    "next_revision",
]

REVISION_COLLISION_PROTECTION = "Prevent"
"""What every revision of a ClusterExtension is created with (`applier.revisions`)."""


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

    @property
    def message(self) -> str:
        """operator-controller's wording of the failure (empty when safe)."""
        if self.problems:
            return str(crdupgradesafety.CRDUpgradeSafetyError(list(self.problems)))
        return self.not_checked or ""

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
    """The permission-preflight verdict for one ServiceAccount."""

    namespace: str
    service_account: str
    exists: bool = True
    missing: tuple[str, ...] = ()
    """The missing permissions in operator-controller's wording, one line per scope."""
    not_checked: str | None = None

    @property
    def ok(self) -> bool:
        return self.exists and not self.missing and self.not_checked is None

    @property
    def message(self) -> str:
        """operator-controller's wording of the failure (empty when it passed)."""
        if self.missing:
            return permissions.message_of(self.missing)
        if not self.exists:
            return f'service account "{self.service_account}" not found in namespace "{self.namespace}"'
        return self.not_checked or ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "serviceAccount": f"{self.namespace}/{self.service_account}",
            "exists": self.exists,
            "ok": self.ok,
            "missing": list(self.missing),
            "notChecked": self.not_checked,
        }


@dataclass(frozen=True, kw_only=True)
class Collisions:
    """Objects of the rollout that exist under another controller, which the revision may not adopt."""

    conflicts: tuple[str, ...] = ()
    """One line per object: what it is and who controls it."""
    not_checked: str | None = None

    @property
    def ok(self) -> bool:
        return not self.conflicts and self.not_checked is None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "conflicts": list(self.conflicts), "notChecked": self.not_checked}


def _crd_names(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        str(o["metadata"]["name"])
        for o in objects
        if o.get("kind") == "CustomResourceDefinition"
        and str(o.get("apiVersion")).startswith("apiextensions")
    ]


async def check_crd_safety(client: Client, objects: Sequence[Mapping[str, Any]]) -> CRDSafety:
    """Compare each CRD of `objects` with the cluster's CRD of that name."""
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
    client: Client,
    *,
    namespace: str,
    service_account: str,
    objects: Sequence[Mapping[str, Any]],
    revision: str | None = None,
    account_known: bool = False,
) -> Permissions:
    """Whether `namespace/service_account` may roll out `objects` (one SubjectAccessReview per
    requirement) as part of the ClusterObjectSet named `revision` (None: its finalizers are not
    checked). `account_known`: the caller has already seen the ServiceAccount (operator-controller
    checks it in a step of its own), so it is not read again."""
    verdict = Permissions(namespace=namespace, service_account=service_account)
    if not account_known:
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
            client, namespace=namespace, service_account=service_account, objects=objects, revision=revision
        )
    except permissions.PermissionCheckError as err:
        return Permissions(namespace=namespace, service_account=service_account, not_checked=str(err))
    if not missing:
        return verdict
    lines = tuple(permissions.lines_of(missing))
    return Permissions(namespace=namespace, service_account=service_account, missing=lines)


def _gvk(obj: Mapping[str, Any]) -> GroupVersionKind:
    group, _, version = str(obj.get("apiVersion")).rpartition("/")
    return GroupVersionKind(group, version, str(obj.get("kind")))


async def next_revision(client: Client, extension: str) -> str | None:
    """The name of the ClusterObjectSet the next rollout of ClusterExtension `extension` creates
    (`<extension>-<n+1>`, n its newest revision's number, as `applier.revisions` numbers them), or
    None when the caller may not list ClusterObjectSets."""
    try:
        listed = await client.list(CLUSTER_OBJECT_SET, label_selector=owner_selector(extension))
    except errors.Forbidden:
        return None
    number = max((ownership.Revision.of(item).number for item in listed.items), default=0) + 1
    return f"{extension}-{number}"


async def check_collisions(
    client: Client, *, extension: str, package: str, objects: Sequence[Mapping[str, Any]]
) -> Collisions:
    """Which of `objects` the next revision of ClusterExtension `extension` would find controlled
    by something else (another ClusterExtension's revision, any other controller, or nothing, which
    `Prevent` also refuses; a CRD an earlier installation of `package` kept is adopted). Reads each
    object once; kinds the cluster does not serve yet (a CRD
    of the same rollout) cannot collide."""
    selector = owner_selector(extension)
    try:
        listed = await client.list(CLUSTER_OBJECT_SET, label_selector=selector)
    except errors.Forbidden as err:
        return Collisions(not_checked=f"cannot list ClusterObjectSets: {err}")
    siblings = {r.uid: r for r in (ownership.Revision.of(item) for item in listed.items)}
    number = max((r.number for r in siblings.values()), default=0) + 1
    upcoming = ownership.Revision(
        name=f"{extension}-{number}",
        uid="",
        number=number,
        labels={
            names.OWNER_KIND_LABEL: names.CLUSTER_EXTENSION,
            names.OWNER_NAME_LABEL: extension,
            names.PACKAGE_NAME_LABEL: package,
        },
    )

    async def live(obj: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
        """How to name `obj`, and the object of that name on the cluster (None: there is none)."""
        metadata = obj.get("metadata") or {}
        name = str(metadata.get("name"))
        try:
            info = await client.resource_for(_gvk(obj))
        except LookupError:
            return f"{obj.get('kind')} {name}", None  # a kind the cluster does not serve yet
        # Rendered objects may name a namespace even for a cluster-scoped kind; apply ignores it.
        namespace = metadata.get("namespace") if info.namespaced else None
        shown = f"{info.gvk.kind} {namespace}/{name}" if namespace else f"{info.gvk.kind} {name}"
        try:
            return shown, await client.get(info.gvk, name, namespace=namespace)
        except errors.NotFound:
            return shown, None

    try:
        found = await asyncio.gather(*(live(obj) for obj in objects))
    except errors.Forbidden as err:
        return Collisions(not_checked=f"cannot read the objects the bundle would apply: {err}")
    conflicts = []
    owners: dict[str, str] = {}
    for shown, existing in found:
        if existing is None:
            continue
        verdict = ownership.judge(existing, upcoming, siblings, REVISION_COLLISION_PROTECTION)
        if verdict.action is not ownership.Action.COLLISION:
            continue
        controller = ownerrefs.controller_of(existing)
        if controller is None:
            conflicts.append(f"{shown} exists and no ClusterExtension manages it")
            continue
        owner = await _revision_owner(client, controller, owners)
        conflicts.append(f"{shown} is controlled by {controller['kind']} {controller['name']}{owner}")
    return Collisions(conflicts=tuple(conflicts))


async def _revision_owner(client: Client, controller: Mapping[str, Any], owners: dict[str, str]) -> str:
    """`" of ClusterExtension <name>"` when `controller` is a ClusterObjectSet that names its owner."""
    if controller.get("kind") != CLUSTER_OBJECT_SET.kind:
        return ""
    name = str(controller.get("name"))
    if name not in owners:
        try:
            revision = await client.get(CLUSTER_OBJECT_SET, name)
        except (errors.NotFound, errors.Forbidden):
            owners[name] = ""
        else:
            labels = (revision.get("metadata") or {}).get("labels") or {}
            owner = labels.get(names.OWNER_NAME_LABEL)
            owners[name] = f" of {labels.get(names.OWNER_KIND_LABEL)} {owner}" if owner else ""
    return owners[name]
