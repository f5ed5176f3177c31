"""What a command is, to `olm.cli.main`: a function found by name when it runs, an exit code, and
the one failure a user can act on.

Each command family (`catalogs`, `packages`, `extensions`, `rbac`, `status`) declares its parsers and
a table of `Handler`s: where each command's function lives. `main` parses the command line with
the parsers alone and imports a command's module only when that command runs, so `olmctl --help`
loads no HTTP client, YAML or pydantic, and each command loads only what it uses (pinned by
`unit/cli/test_imports.py`). This module is imported by every invocation: it imports nothing but
the standard library, and of that only what `argparse` needs anyway or costs next to nothing.

A command is an async function of the session (`olm.cli.session.Session`) and the parsed
arguments that writes its output and returns an exit code. Failures a user can act on raise
`CommandFailed`; `olm.cli.session.run` maps the rest.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from olm.cli.session import Command

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "CommandFailed",
    "Handler",
    "Table",
    "not_found",
]

EXIT_OK = 0
EXIT_FAILED = 1
"""The operation failed (refused, not found, unreadable content, unusable kubeconfig)."""
EXIT_USAGE = 2
"""argparse's code for a usage error."""
EXIT_UNREACHABLE = 3
"""The API server cannot be reached, or its certificate does not verify."""
EXIT_INTERRUPTED = 130
"""The shell's code for a process ended by SIGINT (128 + 2)."""


class CommandFailed(Exception):
    """The operation failed for a reason stated in one line (exit code 1)."""


def not_found(resource: str, name: str) -> CommandFailed:
    """kubectl's words for a missing object: `clustercatalog "demo" not found`."""
    return CommandFailed(f'{resource} "{name}" not found')


class Handler(NamedTuple):
    """Where a command's function lives: `module` is imported when the command runs, not before.
    (A named tuple rather than a dataclass: `dataclasses` alone would add a tenth to `--help`.)"""

    module: str
    function: str

    def load(self) -> Command:
        """Import the module and return the command's function."""
        found: Command = getattr(importlib.import_module(self.module), self.function)
        return found


Table = Mapping[str, Handler]
"""A family's commands by the name `olm.cli.parsing.command_parser(..., command=)` gives them
(`"search"`, `"catalog add"`)."""
