"""The command line of `olmctl catalog add|update|remove|list` (the functions: `commands`, and
`listing` for `list`)."""

from __future__ import annotations

import argparse

from olm.cli.commands import Handler, Table
from olm.cli.parsing import Subparsers, command_parser, output_flag, positive

__all__ = ["COMMANDS", "add_commands"]

_MODULE = "olm.cli.catalogs.commands"
COMMANDS: Table = {
    "catalog add": Handler(_MODULE, "catalog_add"),
    "catalog update": Handler(_MODULE, "catalog_update"),
    "catalog remove": Handler(_MODULE, "catalog_remove"),
    "catalog list": Handler("olm.cli.catalogs.listing", "catalog_list"),
}


def add_commands(top: Subparsers[argparse.ArgumentParser]) -> None:
    """The `catalog` group and its verbs (each with `command=` naming a key of `COMMANDS`)."""
    catalog = command_parser(
        top, "catalog", "add, update, remove and list ClusterCatalogs", "olmctl catalog list"
    )
    verbs = catalog.add_subparsers(dest="verb", metavar="VERB")
    add = command_parser(
        verbs,
        "add",
        "create a ClusterCatalog that serves a catalog image",
        "olmctl catalog add demo registry.example/catalogs/demo:latest --poll-interval 10 --priority 5",
        command="catalog add",
    )
    add.add_argument("name", metavar="NAME")
    add.add_argument("image", metavar="IMAGE", help="catalog image reference (tag or digest)")
    update = command_parser(
        verbs,
        "update",
        "change a ClusterCatalog's image, poll interval or priority",
        "olmctl catalog update demo --priority 10",
        command="catalog update",
    )
    update.add_argument("name", metavar="NAME")
    update.add_argument("--image", help="new catalog image reference")
    for sub in (add, update):
        sub.add_argument(
            "--poll-interval",
            type=positive,
            metavar="MINUTES",
            help="poll a tag for new digests every MINUTES",
        )
        sub.add_argument(
            "--priority", type=int, metavar="N", help="preference among catalogs offering the same bundle"
        )
    remove = command_parser(
        verbs, "remove", "delete a ClusterCatalog", "olmctl catalog remove demo", command="catalog remove"
    )
    remove.add_argument("name", metavar="NAME")
    listing = command_parser(
        verbs,
        "list",
        "list ClusterCatalogs with their state and package counts",
        "olmctl catalog list -o yaml",
        command="catalog list",
    )
    output_flag(listing)
