"""`olmctl install`, `uninstall`, `list` and `upgrade`: preview, create, remove and list ClusterExtensions.

    olmctl install kube-green --namespace kube-green --service-account installer --dry-run
    olmctl install kube-green --namespace kube-green --service-account installer --create-service-account
    olmctl list
    olmctl upgrade kube-green --version 0.7.0 --dry-run
    olmctl uninstall kube-green

`install` and `upgrade` first show what operator-controller would do (`olm.cli.plan`, the install
pipeline operator-controller runs: the resolved bundle, the install mode, the objects) with the
verdicts of its preflights against the live cluster (CRD upgrade safety, the ServiceAccount's
permissions, objects another owner controls). A failed preflight stops them before anything is
written: operator-controller would refuse the same content. Then they write the ClusterExtension and
wait (`olm.cli.progress`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from typing import Any

from olm.api import names
from olm.api.extensionspec import UpgradeConstraintPolicy
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.cli import preview, render
from olm.cli.commands import Command, CommandFailed, Session, get_extension
from olm.cli.leastprivilege import installer_rbac
from olm.cli.parsing import Subparsers, command_parser, output_flag, positive
from olm.cli.plan import (
    CatalogReads,
    ResolutionFailed,
    add_pull_flags,
    extension_object,
    plan_install,
    pull_options,
)
from olm.cli.progress import Display, Outcome, installed_outcome, poll_until
from olm.cli.upgradepath import UpgradePath, upgrade_path
from olm.pipeline.plan import Plan
from olm.pipeline.preflight.verdicts import Collisions, CRDSafety, Permissions, check_permissions
from olm.pipeline.resolve import Installed
from olm_runtime.client import errors, kinds

__all__ = [
    "COMMANDS",
    "add_commands",
    "add_source_flags",
    "blockers",
    "catalog_selector",
    "label_selector",
]

DEFAULT_TIMEOUT = 300
GRANT_PROPAGATION_SECONDS = 10


def label_selector(text: str) -> tuple[str, str]:
    """`key=value` of `--catalog-selector` (a usage error otherwise)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


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


def catalog_selector(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ClusterExtension's catalog selector from `--catalog` and `--catalog-selector`."""
    labels = dict(args.catalog_selector or ())
    if args.catalog:
        labels[names.METADATA_NAME_LABEL] = args.catalog
    return {"matchLabels": labels} if labels else None


async def _require_catalog(session: Session, name: str | None) -> None:
    if name is None:
        return
    try:
        await session.client.get(CLUSTER_CATALOG, name)
    except errors.NotFound:
        raise CommandFailed(f'clustercatalog "{name}" not found') from None


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
    session: Session, namespace: str, account: str, objects: list[dict[str, Any]], *, just_granted: bool
) -> Permissions:
    """The permission preflight; right after RBAC was applied, asked again for a few seconds while
    it reports missing permissions, because the API server's authorizer sees new bindings from its
    own cache, a moment later."""
    result = await check_permissions(
        session.client, namespace=namespace, service_account=account, objects=objects
    )
    for _ in range(GRANT_PROPAGATION_SECONDS if just_granted else 0):
        if result.ok:
            break
        await asyncio.sleep(1)
        result = await check_permissions(
            session.client, namespace=namespace, service_account=account, objects=objects
        )
    return result


async def _wait_installed(session: Session, name: str, version: str | None, timeout: int) -> dict[str, Any]:
    display = Display.for_stream(session.err)

    async def read() -> dict[str, Any] | None:
        try:
            return dict(await session.client.get(CLUSTER_EXTENSION, name))
        except errors.NotFound:
            return None

    def judge(obj: dict[str, Any] | None) -> Outcome:
        return installed_outcome(obj, version)

    found: dict[str, Any] = await poll_until(
        read,
        judge,
        observe=display.show,
        display=display,
        timeout=timeout,
        what=f"clusterextension {name} to install {version or 'its bundle'}",
    )
    return found


def _emit_status(session: Session, output: str, obj: dict[str, Any], data: dict[str, Any] | None) -> None:
    row = preview.extension_row(obj)
    if output == "table":
        session.out.write(preview.extension_rows_table([row]))
    else:
        session.out.write(render.dump({**(data or {}), "extension": row}, output))


async def install(session: Session, args: argparse.Namespace) -> int:
    name = args.name or args.package
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
        args.package,
        namespace=args.namespace,
        service_account=args.service_account,
        version=args.version,
        channels=args.channel or (),
        selector=selector,
        config=config,
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
            session, args.namespace, args.service_account, plan.objects, just_granted=bool(rbac)
        )
    data = preview.plan_data(plan, permissions=permissions)
    if args.output == "table":
        session.out.write(preview.plan_text(plan, permissions=permissions, permissions_note=note))
    found = blockers(crd_safety, permissions, plan.collisions)
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
    installed = await _wait_installed(session, name, None, args.timeout)
    _emit_status(session, args.output, installed, data)
    return 0


def _installed(obj: dict[str, Any]) -> Installed:
    bundle = ((obj.get("status") or {}).get("install") or {}).get("bundle") or {}
    if not bundle.get("name") or not bundle.get("version"):
        raise CommandFailed(f'clusterextension "{obj["metadata"]["name"]}" has no bundle installed yet')
    return Installed(name=str(bundle["name"]), version=str(bundle["version"]))


async def upgrade(session: Session, args: argparse.Namespace) -> int:
    obj = await get_extension(session, args.name)
    installed = _installed(obj)
    spec = obj["spec"]
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
        return await plan_install(session, wanted, installed=installed, pull=pull_options(args), read=read)

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
    found = blockers(plan.crd_safety, plan.permissions, plan.collisions, path_blocks)
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
    upgraded = await _wait_installed(session, args.name, plan.bundle.version, args.timeout)
    _emit_status(session, args.output, upgraded, data)
    return 0


async def list_extensions(session: Session, args: argparse.Namespace) -> int:
    found = await session.client.list(CLUSTER_EXTENSION)
    rows = sorted((preview.extension_row(o) for o in found.items), key=lambda r: str(r["name"]))
    if args.output != "table":
        session.out.write(render.dump(rows, args.output))
    elif not rows:
        print("No ClusterExtensions found.", file=session.err)
    else:
        session.out.write(preview.extension_rows_table(rows))
    return 0


async def uninstall(session: Session, args: argparse.Namespace) -> int:
    name = args.name
    try:
        await session.client.delete(CLUSTER_EXTENSION, name)
    except errors.NotFound:
        raise CommandFailed(f'clusterextension "{name}" not found') from None
    print(f"clusterextension/{name} deleting; waiting until its content is gone", file=session.err)
    owned = f"{names.OWNER_KIND_LABEL}={names.CLUSTER_EXTENSION},{names.OWNER_NAME_LABEL}={name}"
    display = Display.for_stream(session.err)

    async def remaining() -> dict[str, int]:
        try:
            await session.client.get(CLUSTER_EXTENSION, name)
            left = {"clusterextension": 1}
        except errors.NotFound:
            left = {"clusterextension": 0}
        for label, gvk in (
            ("clusterobjectsets", CLUSTER_OBJECT_SET),
            ("customresourcedefinitions", kinds.CUSTOM_RESOURCE_DEFINITION),
            ("deployments", kinds.DEPLOYMENT),
        ):
            with contextlib.suppress(errors.Forbidden):  # wait only for what this user may see
                left[label] = len((await session.client.list(gvk, label_selector=owned)).items)
        return left

    shown: list[dict[str, int]] = []

    def observe(left: dict[str, int]) -> None:
        if not shown or shown[-1] != left:
            shown.append(left)
            display.note("remaining: " + ", ".join(f"{count} {kind}" for kind, count in left.items()))

    await poll_until(
        remaining,
        lambda left: Outcome(done=not any(left.values())),
        observe=observe,
        display=display,
        timeout=args.timeout,
        what=f"clusterextension {name} and its content to be deleted",
    )
    print(f"clusterextension/{name} uninstalled", file=session.out)
    return 0


COMMANDS: dict[str, Command] = {
    "install": install,
    "upgrade": upgrade,
    "list": list_extensions,
    "uninstall": uninstall,
}


def _timeout_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=positive,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"how long to wait (default: {DEFAULT_TIMEOUT})",
    )


def add_source_flags(parser: argparse.ArgumentParser) -> None:
    """`--channel`, `--catalog`, `--catalog-selector` and `--watch-namespace`: the spec fields a new
    extension is planned with (`install` and `rbac`; read back with `catalog_selector(args)`)."""
    parser.add_argument("--channel", action="append", metavar="C", help="channel to follow (repeatable)")
    parser.add_argument("--catalog", metavar="NAME", help="only this ClusterCatalog")
    parser.add_argument(
        "--catalog-selector",
        action="append",
        type=label_selector,
        metavar="KEY=VALUE",
        help="only ClusterCatalogs with this label (repeatable)",
    )
    parser.add_argument(
        "--watch-namespace", metavar="NS", help="the namespace the operator watches (spec.config.inline)"
    )


def add_commands(top: Subparsers[argparse.ArgumentParser]) -> None:
    """Add this module's parsers (each with `command=` naming a key of `COMMANDS`)."""
    install_parser = command_parser(
        top,
        "install",
        "preview and install a package as a ClusterExtension",
        "olmctl install kube-green --namespace kube-green --service-account installer --dry-run",
        command="install",
    )
    install_parser.add_argument("package", metavar="PKG")
    install_parser.add_argument("-n", "--namespace", required=True, help="namespace to install into")
    install_parser.add_argument("--name", help="the ClusterExtension's name (default: the package name)")
    install_parser.add_argument(
        "--service-account", required=True, metavar="SA", help="ServiceAccount in NAMESPACE that installs it"
    )
    install_parser.add_argument(
        "--create-service-account",
        action="store_true",
        help="create the ServiceAccount (and namespace) with the least-privilege RBAC of `olmctl rbac`",
    )
    install_parser.add_argument("--version", metavar="RANGE", help="version or version range")
    add_source_flags(install_parser)
    install_parser.add_argument("--dry-run", action="store_true", help="preview only; change nothing")
    _timeout_flag(install_parser)
    add_pull_flags(install_parser)
    output_flag(install_parser)

    upgrade_parser = command_parser(
        top,
        "upgrade",
        "preview and perform the upgrade of a ClusterExtension",
        "olmctl upgrade kube-green --version 0.7.0 --dry-run",
        command="upgrade",
    )
    upgrade_parser.add_argument("name", metavar="NAME")
    upgrade_parser.add_argument(
        "--version", metavar="RANGE", help="target version or range (default: newest)"
    )
    upgrade_parser.add_argument(
        "--channel", action="append", metavar="C", help="channel to follow (repeatable)"
    )
    upgrade_parser.add_argument(
        "--self-certified",
        action="store_true",
        help="set upgradeConstraintPolicy SelfCertified: allow a target that is not a successor",
    )
    upgrade_parser.add_argument("--dry-run", action="store_true", help="preview only; change nothing")
    _timeout_flag(upgrade_parser)
    add_pull_flags(upgrade_parser)
    output_flag(upgrade_parser)

    listing = command_parser(
        top,
        "list",
        "installed ClusterExtensions with version, channels and health",
        "olmctl list -o yaml",
        command="list",
    )
    output_flag(listing)

    removal = command_parser(
        top,
        "uninstall",
        "delete a ClusterExtension and wait until its content is gone",
        "olmctl uninstall kube-green",
        command="uninstall",
    )
    removal.add_argument("name", metavar="NAME")
    _timeout_flag(removal)
