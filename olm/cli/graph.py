"""`olmctl package graph`: the upgrade graph of a package as SVG or Graphviz dot."""

from __future__ import annotations

import argparse

from olm.cli.commands import Command
from olm.cli.parsing import Subparsers

__all__ = ["COMMANDS", "add_commands"]

COMMANDS: dict[str, Command] = {}


def add_commands(package_verbs: Subparsers[argparse.ArgumentParser]) -> None:
    """Add this module's parsers (each with `command=` naming a key of `COMMANDS`)."""
