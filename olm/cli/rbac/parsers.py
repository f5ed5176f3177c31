"""The command line of `olmctl rbac` (the function: `command`)."""

from __future__ import annotations

import argparse

from olm.cli.commands import Handler, Table
from olm.cli.extensions.parsers import add_pull_flags, add_source_flags
from olm.cli.parsing import Subparsers, command_parser, output_flag

__all__ = ["COMMANDS", "add_commands"]

COMMANDS: Table = {"rbac": Handler("olm.cli.rbac.command", "rbac")}


def add_commands(top: Subparsers[argparse.ArgumentParser]) -> None:
    """`rbac` (with `command=` naming a key of `COMMANDS`)."""
    parser = command_parser(
        top,
        "rbac",
        "print the least-privilege RBAC that lets a ServiceAccount install, upgrade and remove a package",
        "olmctl rbac kube-green --namespace kube-green --service-account installer "
        "--version 0.7.0 --version 0.7.1 | kubectl apply -f -",
        command="rbac",
    )
    parser.add_argument("package", metavar="PKG")
    parser.add_argument("-n", "--namespace", required=True, help="the extension's install namespace")
    parser.add_argument(
        "--service-account", required=True, metavar="SA", help="the installer ServiceAccount in NAMESPACE"
    )
    parser.add_argument(
        "--extension-name", metavar="N", help="the ClusterExtension's name (default: the package name)"
    )
    parser.add_argument(
        "--version",
        action="append",
        metavar="RANGE",
        help="a version or range to cover; repeat it to cover each version an upgrade passes through "
        "(default: the version operator-controller would install)",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="with two --version: print the permissions the second version's roles grant that the "
        "first's do not (what spec.upgrade.permissionGrowth holds)",
    )
    add_source_flags(parser)
    add_pull_flags(parser)
    output_flag(parser, ("yaml", "json"))
