"""The command line of `olmctl install|upgrade|rollback|list|uninstall` (the functions: `install`,
`upgrade`, `rollback`, `listing`, `uninstall`), and the flags `olmctl rbac` shares with `install`."""

from __future__ import annotations

import argparse
from typing import Any

from olm.api import names
from olm.cli.commands import Handler, Table
from olm.cli.parsing import Subparsers, command_parser, output_flag, path, positive

__all__ = [
    "COMMANDS",
    "DEFAULT_TIMEOUT",
    "READINESS",
    "add_commands",
    "add_pull_flags",
    "add_source_flags",
    "catalog_selector",
    "label_selector",
]

COMMANDS: Table = {
    "install": Handler("olm.cli.extensions.install", "install"),
    "upgrade": Handler("olm.cli.extensions.upgrade", "upgrade"),
    "list": Handler("olm.cli.extensions.listing", "list_extensions"),
    "uninstall": Handler("olm.cli.extensions.uninstall", "uninstall"),
    "rollback": Handler("olm.cli.extensions.rollback", "rollback"),
}

DEFAULT_TIMEOUT = 300


def label_selector(text: str) -> tuple[str, str]:
    """`key=value` of `--catalog-selector` (a usage error otherwise)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def catalog_selector(args: argparse.Namespace) -> dict[str, Any] | None:
    """The ClusterExtension's catalog selector from `--catalog` and `--catalog-selector`."""
    labels = dict(args.catalog_selector or ())
    if args.catalog:
        labels[names.METADATA_NAME_LABEL] = args.catalog
    return {"matchLabels": labels} if labels else None


READINESS = ("None", "Respect", "Ignore")
"""`spec.upgrade.readiness`'s values, spelled here so parsing the command line stays light (the
enum's module is imported only by the commands that run)."""


def add_source_flags(parser: argparse.ArgumentParser) -> None:
    """`--channel`, `--catalog`, `--catalog-selector`, `--watch-namespace` and `--readiness`: the
    spec fields a new extension is planned with (`install` and `rbac`; read back with
    `catalog_selector(args)`)."""
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
    parser.add_argument(
        "--readiness",
        choices=READINESS,
        default=READINESS[0],
        help="spec.upgrade.readiness: Respect or Ignore add the OperatorCondition contract of OLM v0 "
        "(default: %(default)s)",
    )


def add_pull_flags(parser: argparse.ArgumentParser) -> None:
    """`--registry-ca` and `--cache-dir`, for commands that read bundles (read back with
    `olm.cli.extensions.plan.pull_options(args)`)."""
    group = parser.add_argument_group("bundle images")
    group.add_argument(
        "--registry-ca",
        type=path,
        action="append",
        default=[],
        metavar="FILE",
        help="CA bundle trusted for the bundle images' registry, besides the system store (repeatable)",
    )
    group.add_argument(
        "--cache-dir",
        type=path,
        default=None,
        metavar="DIR",
        help="where pulled bundle images are kept (default: $XDG_CACHE_HOME/olmctl)",
    )


def _timeout_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=positive,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"how long to wait (default: {DEFAULT_TIMEOUT})",
    )


def add_commands(top: Subparsers[argparse.ArgumentParser]) -> None:
    """`install`, `upgrade`, `list` and `uninstall` (each with `command=` naming a key of `COMMANDS`)."""
    install_parser = command_parser(
        top,
        "install",
        "preview and install a package as a ClusterExtension",
        "olmctl install kube-green --namespace kube-green --service-account installer --dry-run",
        command="install",
    )
    install_parser.add_argument("package", metavar="PKG", nargs="?", help="the package (or --bundle-image)")
    install_parser.add_argument(
        "--bundle-image",
        metavar="REF",
        help="install this registry+v1 bundle image (tag or digest) instead of a package from a catalog",
    )
    install_parser.add_argument(
        "--poll-interval",
        metavar="MINUTES",
        type=int,
        help="with --bundle-image and a tag: check the tag for new content every MINUTES",
    )
    install_parser.add_argument("-n", "--namespace", required=True, help="namespace to install into")
    install_parser.add_argument(
        "--name",
        help="the ClusterExtension's name (default: the package name, or the image's repository name)",
    )
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
        "olmctl upgrade kube-green --version 0.7.0 --dry-run\n  olmctl upgrade kube-green --approve 0.8.0",
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
    upgrade_parser.add_argument(
        "--approve",
        nargs="?",
        const="",
        metavar="VERSION",
        help="approve an update spec.upgrade holds (default: the one status.update.held names) by "
        "setting spec.upgrade.approvedVersion",
    )
    upgrade_parser.add_argument("--dry-run", action="store_true", help="preview only; change nothing")
    _timeout_flag(upgrade_parser)
    add_pull_flags(upgrade_parser)
    output_flag(upgrade_parser)

    rollback_parser = command_parser(
        top,
        "rollback",
        "return a ClusterExtension to an earlier version's content (spec.upgrade.rollbackTo)",
        "olmctl rollback kube-green\n  olmctl rollback kube-green --to 0.7.0\n"
        "  olmctl rollback kube-green --clear",
        command="rollback",
    )
    rollback_parser.add_argument("name", metavar="NAME")
    rollback_parser.add_argument(
        "--to", metavar="VERSION", help="the version (default: the one installed before the current one)"
    )
    rollback_parser.add_argument(
        "--clear", action="store_true", help="remove spec.upgrade.rollbackTo: updates resume"
    )
    rollback_parser.add_argument(
        "--dry-run", action="store_true", help="say what would be set; change nothing"
    )
    _timeout_flag(rollback_parser)
    output_flag(rollback_parser)

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
        "olmctl uninstall kube-green [--cascade]",
        command="uninstall",
    )
    removal.add_argument("name", metavar="NAME")
    removal.add_argument(
        "--cascade",
        action="store_true",
        help="delete the extension's CRDs, and so every custom resource of them, before the rest "
        "(sets spec.removal.policy to Cascade first); by default the extension's own policy "
        "applies, which keeps them unless it says Cascade",
    )
    _timeout_flag(removal)
