"""`olmctl upgrade`: preview the upgrade of a ClusterExtension, then change its spec and wait.

    olmctl upgrade kube-green --version 0.7.0 --dry-run
    olmctl upgrade kube-green --channel stable --self-certified
    olmctl upgrade kube-green --approve 0.8.0

The preview is `install`'s (the plan operator-controller would make for the edited spec, with its
preflight verdicts) plus the upgrade path from the installed bundle to the target
(`olm.cli.packages.upgradepath`): a target that is not a direct successor is refused unless
`--self-certified` sets `upgradeConstraintPolicy: SelfCertified`.

`--approve [VERSION]` approves an update `spec.upgrade` holds (by default the one
`status.update.held` names): it writes `spec.upgrade.approvedVersion`, an edit of the object like
any other, after the same preview.
"""

from __future__ import annotations

import argparse
from typing import Any

from olm.api.extensionspec import UpgradeConstraintPolicy
from olm.api.kinds import CLUSTER_EXTENSION
from olm.cli import render
from olm.cli.commands import CommandFailed
from olm.cli.extensions import listing, preview, progress
from olm.cli.extensions.plan import CatalogReads, ResolutionFailed, plan_install, pull_options
from olm.cli.packages.upgradepath import upgrade_path
from olm.cli.session import Session, get_extension
from olm.pipeline.plan import Plan
from olm.pipeline.resolve import Installed

__all__ = ["upgrade"]


def _installed(obj: dict[str, Any]) -> Installed:
    bundle = ((obj.get("status") or {}).get("install") or {}).get("bundle") or {}
    if not bundle.get("name") or not bundle.get("version"):
        raise CommandFailed(f'clusterextension "{obj["metadata"]["name"]}" has no bundle installed yet')
    return Installed(name=str(bundle["name"]), version=str(bundle["version"]))


async def approve(
    session: Session, args: argparse.Namespace, obj: dict[str, Any], installed: Installed
) -> int:
    """`--approve`: preview the approved version's plan, then write `spec.upgrade.approvedVersion`."""
    if args.version is not None or args.channel or args.self_certified:
        raise CommandFailed(
            "--approve approves what spec.source.catalog allows; it takes no --version, "
            "--channel or --self-certified"
        )
    held = ((obj.get("status") or {}).get("update") or {}).get("held") or {}
    version = args.approve or held.get("version")
    if not version:
        raise CommandFailed(
            f'nothing of clusterextension "{args.name}" is waiting for approval (status.update.held is '
            "empty); name a version: --approve VERSION"
        )
    spec = obj["spec"]
    wanted = {**obj, "spec": {**spec, "upgrade": {**(spec.get("upgrade") or {}), "approvedVersion": version}}}
    plan = await plan_install(
        session, wanted, installed=installed, pull=pull_options(args), watch_namespace_flag=False
    )
    if plan.bundle.version == installed.version:
        raise CommandFailed(
            f"{version} cannot be installed from {installed.version}: no bundle of that version is reachable "
            "within spec.source.catalog (see `olmctl status` and `olmctl package graph`)"
        )
    data = preview.plan_data(plan, permissions=plan.permissions)
    if args.output == "table":
        session.out.write(preview.plan_text(plan, permissions=plan.permissions))
    found = preview.blockers(plan.crd_safety, plan.permissions, plan.collisions)
    if args.dry_run:
        if args.output != "table":
            session.out.write(render.dump(data, args.output))
        if found:
            raise CommandFailed("the upgrade would not proceed: " + "; ".join(found))
        print(f"would set spec.upgrade.approvedVersion to {version}", file=session.err)
        return 0
    if found:
        raise CommandFailed("the upgrade would not proceed, nothing was changed: " + "; ".join(found))
    await session.client.patch(
        CLUSTER_EXTENSION, args.name, {"spec": {"upgrade": {"approvedVersion": version}}}
    )
    print(f"clusterextension/{args.name} approved {version}; waiting for it", file=session.err)
    upgraded = await progress.wait_installed(session, args.name, version, args.timeout)
    listing.print_installed(session, args.output, upgraded, data)
    return 0


async def upgrade(session: Session, args: argparse.Namespace) -> int:
    obj = await get_extension(session, args.name)
    installed = _installed(obj)
    if args.approve is not None:
        return await approve(session, args, obj, installed)
    spec = obj["spec"]
    image = (spec["source"].get("bundle") or {}).get("ref")
    if image is not None:
        raise CommandFailed(
            f"clusterextension {args.name!r} installs the bundle image {image}, not a package from a "
            "catalog: point spec.source.bundle.ref at the new image (or set pollIntervalMinutes to follow "
            "its tag)"
        )
    catalog = spec["source"]["catalog"]
    channels = args.channel or catalog.get("channels") or ()
    version = args.version if args.version is not None else catalog.get("version")
    policy = (
        UpgradeConstraintPolicy.SELF_CERTIFIED
        if args.self_certified
        else catalog.get("upgradeConstraintPolicy", UpgradeConstraintPolicy.CATALOG_PROVIDED)
    )
    read: CatalogReads = {}

    async def plan_with(chosen_policy: str) -> Plan:
        # The extension as it would be after the edit: the rest of its spec is read as it stands.
        wanted_catalog = {k: v for k, v in catalog.items() if k not in ("version", "channels")}
        if version:
            wanted_catalog["version"] = version
        if channels:
            wanted_catalog["channels"] = list(channels)
        wanted_catalog["upgradeConstraintPolicy"] = str(chosen_policy)
        wanted = {**obj, "spec": {**spec, "source": {**spec["source"], "catalog": wanted_catalog}}}
        return await plan_install(
            session,
            wanted,
            installed=installed,
            pull=pull_options(args),
            read=read,
            watch_namespace_flag=False,
        )

    try:
        plan = await plan_with(policy)
    except ResolutionFailed:
        if policy == UpgradeConstraintPolicy.SELF_CERTIFIED:
            raise
        # Find what the user asked for regardless of upgrade edges, to say why it is not allowed.
        plan = await plan_with(UpgradeConstraintPolicy.SELF_CERTIFIED)
    path = upgrade_path(
        plan.package_content,
        plan.bundle.catalog,
        installed,
        target=plan.bundle.name,
        target_version=plan.bundle.version,
        channels=channels,
    )
    # SelfCertified lifts the successor rule; the path is still shown.
    path_blocks = None if policy == UpgradeConstraintPolicy.SELF_CERTIFIED else path
    data = preview.plan_data(plan, permissions=plan.permissions, path=path)
    if args.output == "table":
        session.out.write(preview.plan_text(plan, permissions=plan.permissions, path=path, channels=channels))
    found = preview.blockers(plan.crd_safety, plan.permissions, plan.collisions, path_blocks)
    if args.dry_run or path.target == installed.name:
        if args.output != "table":
            session.out.write(render.dump(data, args.output))
        if found:
            raise CommandFailed("the upgrade would not proceed: " + "; ".join(found))
        return 0
    if found:
        raise CommandFailed("the upgrade would not proceed, nothing was changed: " + "; ".join(found))
    patch: dict[str, Any] = {}
    if args.version is not None:
        patch["version"] = args.version
    if args.channel:
        patch["channels"] = list(args.channel)
    if args.self_certified:
        patch["upgradeConstraintPolicy"] = str(UpgradeConstraintPolicy.SELF_CERTIFIED)
    if patch:
        await session.client.patch(CLUSTER_EXTENSION, args.name, {"spec": {"source": {"catalog": patch}}})
        print(f"clusterextension/{args.name} patched; waiting for {plan.bundle.version}", file=session.err)
    upgraded = await progress.wait_installed(session, args.name, plan.bundle.version, args.timeout)
    listing.print_installed(session, args.output, upgraded, data)
    return 0
