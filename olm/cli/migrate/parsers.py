"""The command line of `olmctl migrate` (the function: `command.migrate`)."""

from __future__ import annotations

import argparse

from olm.cli.commands import Handler, Table
from olm.cli.extensions.parsers import add_pull_flags
from olm.cli.parsing import Subparsers, command_parser, output_flag, positive

__all__ = ["COMMANDS", "add_commands"]

COMMANDS: Table = {"migrate": Handler("olm.cli.migrate.command", "migrate")}


def add_commands(top: Subparsers[argparse.ArgumentParser]) -> None:
    """`migrate` (with `command=` naming a key of `COMMANDS`)."""
    parser = command_parser(
        top,
        "migrate",
        "move OLM v0 installations (Subscriptions and their CSVs) to ClusterExtensions without reinstalling",
        "olmctl migrate --dry-run\n"
        "  olmctl migrate -n team-a --subscription etcd --catalog olm/community=community",
        command="migrate",
    )
    parser.add_argument(
        "-n", "--namespace", help="only the installations in this namespace (default: every namespace)"
    )
    parser.add_argument("--subscription", metavar="NAME", help="only this Subscription (needs --namespace)")
    parser.add_argument(
        "--catalog",
        action="append",
        metavar="NS/SOURCE=CATALOG",
        help="use ClusterCatalog CATALOG for CatalogSource NS/SOURCE (repeatable; needed for a "
        "CatalogSource that serves from an address; by default one with the CatalogSource's image is "
        "used, or created)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan and what would be refused; change nothing"
    )
    parser.add_argument(
        "--timeout",
        type=positive,
        default=300,
        metavar="SECONDS",
        help="how long to wait for each step (a catalog to serve, an extension to install; default 300)",
    )
    add_pull_flags(parser)
    output_flag(parser)
