"""The command line of `olmctl status` (the function: `explain`)."""

from __future__ import annotations

import argparse

from olm.cli.commands import Handler, Table
from olm.cli.parsing import Subparsers, command_parser, output_flag

__all__ = ["COMMANDS", "add_commands"]

COMMANDS: Table = {"status": Handler("olm.cli.status.explain", "status")}


def add_commands(top: Subparsers[argparse.ArgumentParser]) -> None:
    """`status` (with `command=` naming a key of `COMMANDS`)."""
    parser = command_parser(
        top,
        "status",
        "explain a ClusterExtension: installed bundle, revisions, Events, what it waits for, what to do",
        "olmctl status kube-green -o yaml",
        command="status",
    )
    parser.add_argument("name", metavar="NAME", help="the ClusterExtension")
    output_flag(parser)
