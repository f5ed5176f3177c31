"""`olmctl migrate`: move OLM v0 installations to OLM v1 ClusterExtensions without reinstalling.

    olmctl migrate --dry-run                 the plan for every v0 installation, changing nothing
    olmctl migrate -n team-a --subscription etcd --catalog olm/community=community

Each installation is assessed first (`assess.refusals`, then v1's rendering of the installed bundle
against the live objects): an installation v1 cannot manage, an object v1 would take from someone
else, or a Deployment whose Pods the hand-over would restart refuses the whole run, and nothing is
changed. Otherwise each installation moves in steps that a second run can repeat or resume:

1. the Subscription is set to Manual approval, so v0 changes nothing more (guarded by the
   resourceVersion the plan was made on);
2. the ServiceAccount `<extension>-installer` gets the least-privilege RBAC of `olmctl rbac`;
3. every object v1 renders that v0 made is marked for hand-over
   (`olm.operatorframework.io/retained-from-package`), and the ClusterExtension, pinned to the
   installed version, adopts it as it is: Pods keep running;
4. the Subscription (with its InstallPlans) and the CSV are deleted: v0's own ownership labels are
   taken off the cluster-scoped objects first, so its CSV finalizer deletes only what v0 alone
   made, and the garbage collector drops the CSV's owner reference from what the revision owns;
5. v0's remaining labels come off, and the OperatorGroup goes when nothing else in its namespace
   uses it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from olm.api import names, ownership, revisions
from olm.api.conditions import TYPE_SERVING
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.cli import render
from olm.cli.catalogs.commands import catalog_object
from olm.cli.commands import CommandFailed
from olm.cli.extensions import progress
from olm.cli.extensions.plan import PullOptions, plan_install, pull_options
from olm.cli.migrate import assess, inventory, v0
from olm.cli.migrate.assess import CatalogChoice
from olm.cli.migrate.v0 import Installation
from olm.cli.rbac.leastprivilege import installer_rbac
from olm.cli.session import FIELD_MANAGER, Session
from olm_runtime import conditions, ownerrefs
from olm_runtime.client import GroupVersionKind, NoKindMatch, PatchType, Preconditions, errors
from olm_runtime.client.kinds import POD

__all__ = ["migrate"]

APPLIER_FIELD_MANAGER: Final = "operator-controller"
"""The field manager a revision applies with: the dry run of a Deployment's hand-over uses it, so
the fields it would take over are the ones the revision will."""
APPROVAL_ANNOTATION: Final = f"{names.GROUP}/approval-before-migration"
POLL_SECONDS: Final = 1.0


@dataclass
class Assessment:
    """One installation, assessed: the ClusterExtension it becomes and what happens to each object."""

    installation: Installation
    name: str = ""
    catalog: CatalogChoice = field(default_factory=CatalogChoice)
    extension: dict[str, Any] | None = None
    rbac: list[dict[str, Any]] = field(default_factory=list)
    adopted: list[dict[str, Any]] = field(default_factory=list)
    created: list[dict[str, Any]] = field(default_factory=list)
    v0_only: list[dict[str, Any]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    revisions: frozenset[str] = frozenset()
    """The uids of the ClusterObjectSets of the ClusterExtension an earlier run created."""

    @property
    def waits_for_catalog(self) -> bool:
        return self.catalog.create and not self.refusals


@dataclass(frozen=True)
class Moved:
    """What one migration did, for its summary line."""

    name: str
    adopted: int
    created: int
    removed_by_v0: int
    pods_restarted: int
    seconds: float


def _label(obj: Mapping[str, Any]) -> str:
    metadata = obj["metadata"]
    where = f"{metadata['namespace']}/" if metadata.get("namespace") else ""
    return f"{obj['kind']} {where}{metadata['name']}"


def _gvk(obj: Mapping[str, Any]) -> GroupVersionKind:
    return GroupVersionKind.from_api_version(obj["apiVersion"], obj["kind"])


async def _revision_uids(session: Session, extension: Mapping[str, Any]) -> frozenset[str]:
    name, uid = extension["metadata"]["name"], str(extension["metadata"].get("uid"))
    listed = await session.client.list(CLUSTER_OBJECT_SET, label_selector=revisions.owner_selector(name))
    return frozenset(str(r.object["metadata"]["uid"]) for r in revisions.states(listed.items, uid).all)


def _extension_name(installation: Installation, taken: Mapping[str, Mapping[str, Any]]) -> str | None:
    if installation.extension is not None:
        return str(installation.extension["metadata"]["name"])
    for name in (installation.package, f"{installation.package}-{installation.namespace}"):
        if name not in taken:
            return name
    return None


async def _catalog_source(session: Session, installation: Installation) -> tuple[str, dict[str, Any] | None]:
    spec = (installation.subscription or {}).get("spec") or {}
    namespace, name = (
        str(spec.get("sourceNamespace") or installation.namespace),
        str(spec.get("source") or ""),
    )
    key = f"{namespace}/{name}"
    try:
        return key, dict(await session.client.get(v0.CATALOG_SOURCE, name, namespace=namespace))
    except errors.NotFound:
        return key, None


async def _spec_changes(session: Session, manifest: Mapping[str, Any], live: Mapping[str, Any]) -> list[str]:
    """What applying `manifest` as a revision does would change in the live Deployment (a server-side
    dry run, so defaults and merge rules are the API server's own)."""
    applied = await session.client.apply(
        manifest, field_manager=APPLIER_FIELD_MANAGER, force=True, dry_run=True
    )
    return assess.spec_changes(live.get("spec"), applied.get("spec"))


async def assess_one(
    session: Session,
    installation: Installation,
    everywhere: Sequence[Installation],
    *,
    catalogs: Sequence[Mapping[str, Any]],
    extensions: Mapping[str, Mapping[str, Any]],
    mapped: Mapping[str, str],
    pull: PullOptions,
) -> Assessment:
    found = Assessment(installation, refusals=assess.refusals(installation, everywhere))
    if found.refusals:
        return found
    name = _extension_name(installation, extensions)
    if name is None:
        found.refusals.append(
            f"ClusterExtensions {installation.package} and {installation.package}-{installation.namespace} "
            "already exist and did not come from this installation"
        )
        return found
    found.name = name
    if installation.extension is not None:
        found.extension = dict(installation.extension)
        found.revisions = await _revision_uids(session, installation.extension)
    else:
        key, source = await _catalog_source(session, installation)
        found.catalog = assess.catalog_for(key, source, catalogs, mapped)
        if found.catalog.refusal:
            found.refusals.append(found.catalog.refusal)
            return found
        found.extension = assess.extension_for(installation, name, found.catalog.name)
        if found.catalog.create:
            return found  # its bundle is rendered once the new ClusterCatalog serves
    try:
        plan = await plan_install(
            session, found.extension, pull=pull, preflights=False, watch_namespace_flag=False
        )
    except CommandFailed as err:
        found.refusals.append(f"OLM v1 cannot install {installation.package} {installation.version}: {err}")
        return found
    found.rbac = installer_rbac(
        plan.objects,
        extension_name=name,
        namespace=installation.namespace,
        service_account=assess.installer_name(name),
    )
    for manifest in plan.objects:
        live = await inventory.live_object(session.client, manifest)
        if live is None:
            found.created.append(manifest)
        elif assess.taken_over(live, found.name, found.revisions):
            found.adopted.append(live)
        elif (controller := ownerrefs.controller_of(live)) is not None:
            found.refusals.append(
                f"{_label(live)} is controlled by {controller.get('kind')} {controller.get('name')}, "
                "not by v0 for this installation"
            )
        elif v0.made_by(live, installation):
            found.adopted.append(live)
            if manifest["kind"] == "Deployment":
                changes = await _spec_changes(session, manifest, live)
                if changes:
                    found.refusals.append(
                        f"handing over {_label(live)} would change {', '.join(changes[:5])}"
                        + (" and restart its Pods" if any(".template" in c for c in changes) else "")
                    )
        else:
            found.refusals.append(f"{_label(live)} exists and v0 did not make it for {installation.csv_name}")
    adopted_uids = {o["metadata"]["uid"] for o in found.adopted}
    if installation.csv is not None:
        found.v0_only = [
            o
            for o in await inventory.v0_objects(session.client, installation)
            if o["metadata"]["uid"] not in adopted_uids
        ]
    return found


# --- the plan, as text -----------------------------------------------------------------------------


def _names(objects: Sequence[Mapping[str, Any]], limit: int = 4) -> str:
    shown = ", ".join(_label(o) for o in objects[:limit])
    return shown + (f", and {len(objects) - limit} more" if len(objects) > limit else "")


def plan_text(found: Sequence[Assessment]) -> str:
    lines: list[str] = []
    for a in found:
        inst = a.installation
        lines.append(f"{inst.package or inst.csv_name} in namespace {inst.namespace} ({inst.key})")
        if a.refusals:
            lines.append("  refused:")
            lines += [f"  - {reason}" for reason in a.refusals]
            lines.append("")
            continue
        spec = (a.extension or {}).get("spec") or {}
        catalog = spec.get("source", {}).get("catalog", {})
        inline = (spec.get("config") or {}).get("inline") or {}
        watch = inline.get("watchNamespace") or "all namespaces"
        channels = catalog.get("channels") or ()
        channel = f"channel {', '.join(channels)}" if channels else "the default channel"
        lines.append(
            f"  becomes:   ClusterExtension {a.name}: {catalog.get('packageName')} {catalog.get('version')} "
            f"pinned, {channel}, watching {watch}"
        )
        if a.catalog.create:
            lines.append(f"  catalog:   ClusterCatalog {a.catalog.name} is created from {a.catalog.image}")
            lines.append("             (the bundle is rendered and checked once it serves)")
        elif a.catalog.name:
            lines.append(f"  catalog:   ClusterCatalog {a.catalog.name}")
        installer = assess.installer_name(a.name)
        lines.append(
            f"  installer: ServiceAccount {inst.namespace}/{installer} with the least-privilege RBAC "
            f"of `olmctl rbac` ({len(a.rbac)} objects)"
        )
        if a.adopted:
            lines.append(f"  adopted:   {len(a.adopted)} objects, as they are: {_names(a.adopted)}")
        if a.created:
            lines.append(f"  created:   {len(a.created)} objects: {_names(a.created)}")
        if a.v0_only:
            lines.append(f"  v0 removes with its CSV: {len(a.v0_only)} objects: {_names(a.v0_only)}")
        for plan in inst.install_plans:
            plan_spec, phase = plan.get("spec") or {}, (plan.get("status") or {}).get("phase")
            if not plan_spec.get("approved") and phase == "RequiresApproval":
                waiting = ", ".join(plan_spec.get("clusterServiceVersionNames") or ())
                lines.append(
                    f"  pending:   v0's upgrade to {waiting} waits for approval; it is dropped "
                    "(upgrade the ClusterExtension instead)"
                )
        deleted = []
        if inst.subscription is not None:
            deleted.append(f"Subscription {inst.subscription['metadata']['name']}")
        plans = [p for p in inst.install_plans if v0.plan_of(p, inst)]
        if plans:
            deleted.append(f"{len(plans)} InstallPlans")
        if inst.csv is not None:
            deleted.append(f"CSV {inst.csv_name}")
        if deleted:
            lines.append(f"  deleted:   {', '.join(deleted)}; the OperatorGroup when nothing else uses it")
        lines.append("")
    return "\n".join(lines)


def plan_data(found: Sequence[Assessment]) -> list[dict[str, Any]]:
    return [
        {
            "installation": a.installation.key,
            "package": a.installation.package,
            "version": a.installation.version,
            "refusals": a.refusals,
            "extension": a.extension,
            "catalog": {"name": a.catalog.name, "create": a.catalog.create, "image": a.catalog.image},
            "rbac": a.rbac,
            "adopted": [_label(o) for o in a.adopted],
            "created": [_label(o) for o in a.created],
            "removedByV0": [_label(o) for o in a.v0_only],
        }
        for a in found
    ]


# --- the move ----------------------------------------------------------------------------------------


class _Step:
    """Progress lines on stderr, named after the extension."""

    def __init__(self, session: Session, name: str) -> None:
        self.session, self.name = session, name

    def __call__(self, text: str) -> None:
        print(f"{self.name}: {text}", file=self.session.err)


async def _wait(what: str, timeout: float, done: Any) -> None:
    deadline = time.monotonic() + timeout
    while not await done():
        if time.monotonic() >= deadline:
            raise CommandFailed(f"timed out after {timeout:g}s waiting for {what}")
        await asyncio.sleep(POLL_SECONDS)


async def _ensure_catalog(session: Session, choice: CatalogChoice, timeout: float) -> None:
    catalog = catalog_object(choice.name, choice.image, poll_minutes=None, priority=None)
    # catalogd's webhook sets the name label too; a cluster without it still gets a selectable catalog.
    catalog["metadata"]["labels"] = {names.METADATA_NAME_LABEL: choice.name}
    try:
        await session.client.create(catalog)
        print(f"clustercatalog/{choice.name} created from {choice.image}", file=session.err)
    except errors.AlreadyExists:
        pass

    async def serving() -> bool:
        found = await session.client.get(CLUSTER_CATALOG, choice.name)
        return conditions.is_true(found.get("status", {}).get("conditions", []), TYPE_SERVING)

    await _wait(f"ClusterCatalog {choice.name} to serve", timeout, serving)


FREEZE_ATTEMPTS: Final = 5


async def _freeze(session: Session, installation: Installation, step: _Step) -> None:
    """Manual approval on the Subscription, written only while its spec and installed CSV are
    still what the plan read (v0 rewrites its status all the time, so the resourceVersion read
    just before the write guards it, not the plan's)."""
    planned = installation.subscription
    if planned is None:
        return
    meta = planned["metadata"]
    for _ in range(FREEZE_ATTEMPTS):
        try:
            fresh = await session.client.get(v0.SUBSCRIPTION, meta["name"], namespace=meta["namespace"])
        except errors.NotFound:
            return  # a run interrupted after it deleted the Subscription
        spec = fresh.get("spec") or {}
        installed = (fresh.get("status") or {}).get("installedCSV")
        if spec != (planned.get("spec") or {}) or installed != installation.csv_name:
            raise CommandFailed(
                f"Subscription {installation.key} changed since the plan was made (it now installs "
                f"{installed or 'nothing'}); nothing of it was changed; run again"
            )
        approval = spec.get("installPlanApproval") or "Automatic"
        if approval == "Manual":
            return
        patch = {
            "metadata": {
                "resourceVersion": fresh["metadata"]["resourceVersion"],
                "annotations": {APPROVAL_ANNOTATION: approval},
            },
            "spec": {"installPlanApproval": "Manual"},
        }
        try:
            await session.client.patch(
                v0.SUBSCRIPTION, meta["name"], patch, namespace=meta["namespace"], patch_type=PatchType.MERGE
            )
        except errors.Conflict:
            continue  # v0 wrote its status in between: read again
        step("Subscription set to Manual approval: v0 changes nothing more")
        return
    raise CommandFailed(
        f"Subscription {installation.key} kept changing; nothing of it was changed; run again"
    )


async def _grant(session: Session, assessment: Assessment, step: _Step) -> None:
    namespace = assessment.installation.namespace
    account = assess.installer_name(assessment.name)
    client = session.client
    await client.apply(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace}},
        field_manager=FIELD_MANAGER,
    )
    for obj in assessment.rbac:
        await client.apply(obj, field_manager=FIELD_MANAGER, force=True)
    step(f"ServiceAccount {namespace}/{account} created with {len(assessment.rbac)} RBAC objects")


GUARDED_ATTEMPTS: Final = 5
"""Reads of an object whose guarded patch met a newer version, before the run gives up on it."""


async def _guarded(
    session: Session,
    read: Mapping[str, Any],
    change: Callable[[Mapping[str, Any]], Mapping[str, Any] | None],
) -> bool:
    """One merge patch of the metadata `change` decides from the object, applied only while it is
    still the object decided on (`ownership.guarded_patch`); the first decision is made on `read`,
    the object as last read. v0's controllers may still write it (a ServiceAccount's secrets, a
    CSV's annotations): then it is read and decided again. Whether a patch was made (not when the
    object is gone or `change` has nothing to do)."""
    live: Mapping[str, Any] | None = read
    for attempt in range(GUARDED_ATTEMPTS):
        if attempt:
            live = await inventory.live_object(session.client, read)
        if live is None:
            return False
        metadata = change(live)
        if not metadata:
            return False
        meta = live["metadata"]
        try:
            await session.client.patch(
                _gvk(live),
                meta["name"],
                ownership.guarded_patch(live, metadata),
                namespace=meta.get("namespace"),
                patch_type=PatchType.MERGE,
            )
            return True
        except errors.Conflict:
            continue
    meta = read["metadata"]
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    raise CommandFailed(
        f"{read['kind']} {where}{meta['name']} changed {GUARDED_ATTEMPTS} times while it was being handed "
        "over; nothing of it was changed; run again"
    )


async def _mark(session: Session, assessment: Assessment, step: _Step) -> None:
    package = assessment.installation.package

    def retained(live: Mapping[str, Any]) -> Mapping[str, Any] | None:
        if assess.taken_over(live, assessment.name, assessment.revisions):
            return None
        annotations = live["metadata"].get("annotations") or {}
        if annotations.get(names.RETAINED_PACKAGE_ANNOTATION) == package:
            return None
        return {"annotations": {names.RETAINED_PACKAGE_ANNOTATION: package}}

    marked = 0
    for adopted in assessment.adopted:
        if await _guarded(session, adopted, retained):
            marked += 1
    step(f"{marked} objects marked for hand-over to the ClusterExtension")


async def _create_extension(session: Session, assessment: Assessment, timeout: int, step: _Step) -> None:
    assert assessment.extension is not None
    if assessment.installation.extension is None:
        try:
            await session.client.create(assessment.extension)
            step(f"clusterextension/{assessment.name} created; waiting for it to adopt the objects")
        except errors.AlreadyExists:
            pass
    version = assessment.installation.version
    await progress.wait_installed(session, assessment.name, version or None, timeout)


async def _delete(session: Session, gvk: GroupVersionKind, obj: Mapping[str, Any]) -> bool:
    """Delete `obj` if it is still the object read (same uid); whether it was there to delete."""
    meta = obj["metadata"]
    try:
        await session.client.delete(
            gvk, meta["name"], namespace=meta.get("namespace"), preconditions=Preconditions(uid=meta["uid"])
        )
        return True
    except (errors.NotFound, errors.Conflict):
        return False


async def _release(session: Session, assessment: Assessment, *, cluster_scoped_only: bool) -> int:
    """Take v0's marks off the adopted objects (re-read, so a second run sees what is left)."""
    released = 0
    for adopted in assessment.adopted:
        if cluster_scoped_only and adopted["metadata"].get("namespace"):
            continue
        # Read first: the hand-over has changed these objects since they were assessed.
        live = await inventory.live_object(session.client, adopted)
        if live is None:
            continue
        if await _guarded(session, live, lambda obj: v0.released_metadata(obj, assessment.installation)):
            released += 1
    return released


async def _remove_v0(session: Session, assessment: Assessment, timeout: int, step: _Step) -> None:
    installation = assessment.installation
    if installation.subscription is not None and await _delete(
        session, v0.SUBSCRIPTION, installation.subscription
    ):
        step("Subscription deleted")
    # Listed now, not at the plan: the catalog operator may have written another plan for the
    # Subscription since (it replaces a pending upgrade's plan when it resolves again), and with the
    # Subscription gone it writes no more.
    for plan in (await session.client.list(v0.INSTALL_PLAN, namespace=installation.namespace)).items:
        if v0.plan_of(plan, installation):
            await _delete(session, v0.INSTALL_PLAN, plan)
    await _release(session, assessment, cluster_scoped_only=True)
    csv = installation.csv
    if csv is None:
        return
    if await _delete(session, v0.CSV, csv):
        step(f"CSV {installation.csv_name} deleted; waiting for v0 to finish with it")

    async def gone() -> bool:
        try:
            await session.client.get(v0.CSV, installation.csv_name, namespace=installation.namespace)
            return False
        except errors.NotFound:
            return True

    await _wait(f"CSV {installation.csv_name} to be deleted", timeout, gone)


async def _remove_leftovers(session: Session, installation: Installation, step: _Step) -> None:
    """v0's Operator view of the installation (nothing carries its label any more), and the
    OperatorGroup when no Subscription or CSV is left in the namespace."""
    namespace = installation.namespace
    client = session.client
    with contextlib.suppress(errors.NotFound, NoKindMatch):
        await client.delete(v0.OPERATOR, f"{installation.package}.{namespace}")
    if (await client.list(v0.SUBSCRIPTION, namespace=namespace)).items:
        return
    csvs = [
        c
        for c in (await client.list(v0.CSV, namespace=namespace)).items
        if v0.COPIED_FROM_LABEL not in (c["metadata"].get("labels") or {})
    ]
    if csvs:
        return
    for group in (await client.list(v0.OPERATOR_GROUP, namespace=namespace)).items:
        if await _delete(session, v0.OPERATOR_GROUP, group):
            step(
                f"OperatorGroup {namespace}/{group['metadata']['name']} deleted: nothing else in the "
                "namespace uses it"
            )


async def _pods(session: Session, deployments: Sequence[Mapping[str, Any]]) -> set[str]:
    uids: set[str] = set()
    for deployment in deployments:
        selector = ((deployment.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        if not selector:
            continue
        text = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
        listed = await session.client.list(
            POD, namespace=deployment["metadata"]["namespace"], label_selector=text
        )
        uids |= {str(p["metadata"]["uid"]) for p in listed.items}
    return uids


async def move(session: Session, assessment: Assessment, timeout: int) -> Moved:
    """Carry out one assessed migration (see the module's steps); safe to run again."""
    started = time.monotonic()
    step = _Step(session, assessment.name)
    deployments = [o for o in assessment.adopted if o["kind"] == "Deployment"]
    pods_before = await _pods(session, deployments)
    await _freeze(session, assessment.installation, step)
    await _grant(session, assessment, step)
    await _mark(session, assessment, step)
    await _create_extension(session, assessment, timeout, step)
    await _remove_v0(session, assessment, timeout, step)
    released = await _release(session, assessment, cluster_scoped_only=False)
    step(f"v0's labels and owner references taken off {released} objects")
    await _remove_leftovers(session, assessment.installation, step)
    for adopted in assessment.adopted:
        live = await inventory.live_object(session.client, adopted)
        if live is None or live["metadata"]["uid"] != adopted["metadata"]["uid"]:
            raise CommandFailed(f"{_label(adopted)} was replaced during the hand-over")
    pods_after = await _pods(session, deployments)
    # Done: the extension is an ordinary one from now on, and a later run does not find it.
    await session.client.patch(
        CLUSTER_EXTENSION,
        assessment.name,
        {"metadata": {"annotations": {assess.MIGRATED_FROM_ANNOTATION: None}}},
        patch_type=PatchType.MERGE,
    )
    return Moved(
        name=assessment.name,
        adopted=len(assessment.adopted),
        created=len(assessment.created),
        removed_by_v0=len(assessment.v0_only),
        pods_restarted=len(pods_before - pods_after),
        seconds=time.monotonic() - started,
    )


# --- the command --------------------------------------------------------------------------------------


def _mapping(values: Sequence[str]) -> dict[str, str]:
    mapped = {}
    for value in values:
        source, sep, catalog = value.partition("=")
        if not sep or "/" not in source or not catalog:
            raise CommandFailed(f"--catalog {value!r}: expected NAMESPACE/CATALOGSOURCE=CLUSTERCATALOG")
        mapped[source] = catalog
    return mapped


async def _assess_all(
    session: Session, args: argparse.Namespace, mapped: Mapping[str, str]
) -> list[Assessment]:
    try:
        everywhere = await inventory.installations(session.client, None)
    except inventory.NoV0 as err:
        raise CommandFailed(str(err)) from None
    # The whole cluster is read even for one namespace: a package v0 installed elsewhere too decides.
    found = [i for i in everywhere if args.namespace is None or i.namespace == args.namespace]
    if args.subscription:
        found = [
            i
            for i in found
            if i.subscription is not None and i.subscription["metadata"]["name"] == args.subscription
        ]
        if not found:
            raise CommandFailed(f"no Subscription {args.subscription} in namespace {args.namespace}")
    catalogs = [dict(c) for c in (await session.client.list(CLUSTER_CATALOG)).items]
    extensions = {str(e["metadata"]["name"]): e for e in (await session.client.list(CLUSTER_EXTENSION)).items}
    pull = pull_options(args)
    return [
        await assess_one(
            session, inst, everywhere, catalogs=catalogs, extensions=extensions, mapped=mapped, pull=pull
        )
        for inst in found
    ]


async def migrate(session: Session, args: argparse.Namespace) -> int:
    if args.subscription and not args.namespace:
        raise CommandFailed("--subscription needs --namespace")
    mapped = _mapping(args.catalog or ())
    found = await _assess_all(session, args, mapped)
    if not found:
        print("no OLM v0 installations found", file=session.err)
        return 0
    if not args.dry_run and any(a.waits_for_catalog for a in found) and not any(a.refusals for a in found):
        for choice in {a.catalog.name: a.catalog for a in found if a.waits_for_catalog}.values():
            await _ensure_catalog(session, choice, args.timeout)
        found = await _assess_all(session, args, mapped)
    if args.output == "table":
        session.out.write(plan_text(found))
    else:
        session.out.write(render.dump(plan_data(found), args.output))
    refused = [a for a in found if a.refusals]
    if refused:
        raise CommandFailed(
            f"{len(refused)} of {len(found)} v0 installations cannot move to OLM v1 (see above); "
            "nothing was changed"
        )
    if args.dry_run:
        return 0
    for assessment in found:
        moved = await move(session, assessment, args.timeout)
        print(
            f"migrated {moved.name}: {moved.adopted} objects adopted, {moved.created} created, "
            f"{moved.removed_by_v0} removed by v0, {moved.pods_restarted} Pods restarted, "
            f"in {moved.seconds:.1f}s",
            file=session.err,
        )
    return 0
