"""`olmctl install`: preview a package's install, then create its ClusterExtension and wait.

    olmctl install kube-green --namespace kube-green --service-account installer --dry-run
    olmctl install kube-green --namespace kube-green --service-account installer --create-service-account
    olmctl install --bundle-image registry.example.com/team/op-bundle:v1 -n op --service-account installer

It first shows what operator-controller would do (`plan`, the install pipeline operator-controller
runs: the resolved bundle, the install mode, the objects) with the verdicts of its preflights
against the live cluster (CRD upgrade safety, the ServiceAccount's permissions, objects another
owner controls). A failed preflight stops it before anything is written: operator-controller would
refuse the same content. Then it writes the ClusterExtension and waits (`progress`).
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from olm import oci
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION
from olm.cli import render
from olm.cli.commands import CommandFailed, not_found
from olm.cli.extensions import listing, preview, progress
from olm.cli.extensions.parsers import catalog_selector
from olm.cli.extensions.plan import extension_object, plan_install, pull_options
from olm.cli.rbac.leastprivilege import installer_rbac
from olm.cli.session import Session
from olm.pipeline.plan import Plan
from olm.pipeline.preflight.verdicts import Permissions, check_permissions
from olm_runtime.client import errors

__all__ = ["GRANT_PROPAGATION_SECONDS", "install"]

GRANT_PROPAGATION_SECONDS = 10


async def _require_catalog(session: Session, name: str | None) -> None:
    if name is None:
        return
    try:
        await session.client.get(CLUSTER_CATALOG, name)
    except errors.NotFound:
        raise not_found("clustercatalog", name) from None


async def _create_service_account(
    session: Session, namespace: str, account: str, rbac: list[dict[str, Any]]
) -> None:
    """The namespace (when missing), the ServiceAccount and its least-privilege RBAC, applied."""
    client = session.client
    await client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    await client.apply(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace}}
    )
    for obj in rbac:
        await client.apply(obj, force=True)
        where = obj["metadata"].get("namespace")
        shown = f"{obj['kind'].lower()}/{obj['metadata']['name']}" + (f" -n {where}" if where else "")
        print(f"{shown} applied", file=session.err)


async def _installer_permissions(
    session: Session, namespace: str, account: str, plan: Plan, *, just_granted: bool
) -> Permissions:
    """The permission preflight of `plan`; right after RBAC was applied, asked again for a few
    seconds while it reports missing permissions, because the API server's authorizer sees new
    bindings from its own cache, a moment later."""

    async def check() -> Permissions:
        return await check_permissions(
            session.client,
            namespace=namespace,
            service_account=account,
            objects=plan.objects,
            revision=plan.revision,
        )

    result = await check()
    for _ in range(GRANT_PROPAGATION_SECONDS if just_granted else 0):
        if result.ok:
            break
        await asyncio.sleep(1)
        result = await check()
    return result


def _name(args: argparse.Namespace) -> str:
    """`--name`, or the package, or the image's repository name (the last path component)."""
    if (args.package is None) == (args.bundle_image is None):
        raise CommandFailed("name a package or give --bundle-image REF, not both")
    if args.poll_interval is not None and args.bundle_image is None:
        raise CommandFailed("--poll-interval needs --bundle-image")
    if args.bundle_image is not None and (
        args.version or args.channel or args.catalog or args.catalog_selector
    ):
        raise CommandFailed(
            "--version, --channel, --catalog and --catalog-selector choose from catalogs; "
            "a bundle image is installed as it is"
        )
    if args.name:
        return str(args.name)
    if args.package is not None:
        return str(args.package)
    try:
        return oci.Reference.parse(args.bundle_image).repository.rsplit("/", 1)[-1]
    except oci.InvalidReference as err:
        raise CommandFailed(f"invalid bundle image {args.bundle_image!r}: {err}") from None


async def install(session: Session, args: argparse.Namespace) -> int:
    name = _name(args)
    try:
        await session.client.get(CLUSTER_EXTENSION, name)
        raise CommandFailed(f'clusterextension "{name}" already exists; see `olmctl upgrade`')
    except errors.NotFound:
        pass
    await _require_catalog(session, args.catalog)
    selector = catalog_selector(args)
    config = {"watchNamespace": args.watch_namespace} if args.watch_namespace else None
    obj = extension_object(
        name,
        args.package or "",
        namespace=args.namespace,
        service_account=args.service_account,
        version=args.version,
        channels=args.channel or (),
        selector=selector,
        config=config,
        readiness=args.readiness,
        bundle_image=args.bundle_image,
        poll_interval=args.poll_interval,
    )
    plan = await plan_install(session, obj, pull=pull_options(args))
    crd_safety = plan.crd_safety
    rbac = (
        installer_rbac(
            plan.objects, extension_name=name, namespace=args.namespace, service_account=args.service_account
        )
        if args.create_service_account
        else []
    )
    permissions: Permissions | None = plan.permissions
    note = ""
    if args.create_service_account and args.dry_run:
        permissions = None
        note = (
            f"ServiceAccount {args.namespace}/{args.service_account} would be created with the "
            f"least-privilege RBAC of `olmctl rbac` ({len(rbac)} objects)"
        )
    elif args.create_service_account:
        if crd_safety is not None and not crd_safety.problems:
            await _create_service_account(session, args.namespace, args.service_account, rbac)
        permissions = await _installer_permissions(
            session, args.namespace, args.service_account, plan, just_granted=bool(rbac)
        )
    data = preview.plan_data(plan, permissions=permissions)
    if args.output == "table":
        session.out.write(preview.plan_text(plan, permissions=permissions, permissions_note=note))
    found = preview.blockers(crd_safety, permissions, plan.collisions)
    if args.dry_run:
        if args.output != "table":
            session.out.write(render.dump(data, args.output))
        if found:
            raise CommandFailed("preflight failed: " + "; ".join(found))
        return 0
    if found:
        raise CommandFailed("preflight failed, no ClusterExtension was created: " + "; ".join(found))
    try:
        await session.client.create(obj)
    except errors.AlreadyExists:
        raise CommandFailed(f'clusterextension "{name}" already exists; see `olmctl upgrade`') from None
    print(f"clusterextension/{name} created; waiting for it to be installed", file=session.err)
    installed = await progress.wait_installed(session, name, None, args.timeout)
    listing.print_installed(session, args.output, installed, data)
    return 0
