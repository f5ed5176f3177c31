"""The command line of `olmctl search` and `olmctl package show|versions|graph` (the functions:
`commands` and `graph`)."""

from __future__ import annotations

import argparse

from olm.cli.commands import Handler, Table
from olm.cli.parsing import Subparsers, command_parser, output_flag

__all__ = ["COMMANDS", "GRAPH_FORMATS", "add_commands"]

_MODULE = "olm.cli.packages.commands"
COMMANDS: Table = {
    "search": Handler(_MODULE, "search"),
    "package show": Handler(_MODULE, "package_show"),
    "package versions": Handler(_MODULE, "package_versions"),
    "package graph": Handler("olm.cli.packages.graph", "package_graph"),
}

GRAPH_FORMATS = ("svg", "dot")


def add_commands(top: Subparsers[argparse.ArgumentParser]) -> None:
    """`search` and the `package` group with its verbs (each with `command=` naming a key of
    `COMMANDS`)."""
    found = command_parser(
        top,
        "search",
        "find packages by name, display name, description or keyword in the serving catalogs",
        "olmctl search green",
        command="search",
    )
    found.add_argument("text", metavar="TEXT")
    found.add_argument("--catalog", metavar="NAME", help="search only this catalog")
    output_flag(found)

    package = command_parser(
        top, "package", "show what a catalog offers of one package", "olmctl package show kube-green"
    )
    package_verbs = package.add_subparsers(dest="verb", metavar="VERB")
    show = command_parser(
        package_verbs,
        "show",
        "channels, versions, deprecations, install modes and provided APIs of a package",
        "olmctl package show kube-green --catalog demo",
        command="package show",
    )
    versions = command_parser(
        package_verbs,
        "versions",
        "the versions of one channel of a package, highest first",
        "olmctl package versions kube-green --channel alpha",
        command="package versions",
    )
    versions.add_argument(
        "--channel", metavar="C", help="channel to list (default: the package's default channel)"
    )
    for sub in (show, versions):
        sub.add_argument("package", metavar="PKG")
        sub.add_argument("--catalog", metavar="NAME", help="only this catalog")
        output_flag(sub)
    graph = command_parser(
        package_verbs,
        "graph",
        "draw the upgrade graph of a package (replaces, skips, skipRange; deprecations; the installed "
        "bundle) as SVG or Graphviz dot",
        "olmctl package graph infinispan --channel stable --extension infinispan > infinispan.svg",
        command="package graph",
    )
    graph.add_argument("package", metavar="PKG")
    graph.add_argument("--channel", metavar="C", help="draw only this channel (default: every channel)")
    graph.add_argument("--catalog", metavar="NAME", help="only this catalog (needed when several hold PKG)")
    graph.add_argument(
        "--extension", metavar="NAME", help="mark the bundle this ClusterExtension has installed"
    )
    output_flag(graph, GRAPH_FORMATS)
