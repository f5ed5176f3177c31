"""`olmctl install`, `uninstall`, `list` and `upgrade`: preview, create, remove and list ClusterExtensions."""

from __future__ import annotations

import argparse

from olm.cli.commands import Command
from olm.cli.parsing import Subparsers

__all__ = ["COMMANDS", "add_commands"]

COMMANDS: dict[str, Command] = {}


def add_commands(top: Subparsers[argparse.ArgumentParser]) -> None:
    """Add this module's parsers (each with `command=` naming a key of `COMMANDS`)."""
