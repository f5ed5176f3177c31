"""The pieces every olmctl command's parser is built from, so that each command family can add its
own commands: the cluster flags accepted before or after any command, `-o`, and a subcommand parser
with a help text, an example and the name `olm.cli.main` dispatches on.

Imported to build the parser of every invocation, `--help` included: nothing here imports more than
the standard library and `olm.api.names`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from olm.api import names

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["FORMATS", "Subparsers", "command_parser", "global_flags", "output_flag", "path", "positive"]

FORMATS = ("table", "json", "yaml")
"""The output formats of `-o` (`olm.cli.render`): aligned tables for people, JSON and YAML for scripts."""

Subparsers = argparse._SubParsersAction  # argparse exposes no public name for it


def global_flags(parser: argparse.ArgumentParser, *, nested: bool) -> None:
    """The flags every command accepts, before or after the command as with kubectl.

    On subcommands the defaults are suppressed so that a flag given before the command is not
    overwritten by the subcommand's default."""
    default = argparse.SUPPRESS if nested else None
    group = parser.add_argument_group("cluster")
    group.add_argument(
        "--kubeconfig", default=default, help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config)"
    )
    group.add_argument(
        "--context", default=default, help="kubeconfig context to use (default: the current one)"
    )
    group.add_argument(
        "--catalogd-ca",
        type=path,
        default=default,
        metavar="FILE",
        help="CA bundle trusted for catalogd's content URL (default: the system trust store)",
    )
    group.add_argument(
        "--system-namespace",
        default=argparse.SUPPRESS if nested else names.DEFAULT_SYSTEM_NAMESPACE,
        metavar="NS",
        help="namespace of catalogd's Service, for the API server proxy (default: "
        + names.DEFAULT_SYSTEM_NAMESPACE
        + ")",
    )


def output_flag(parser: argparse.ArgumentParser, formats: tuple[str, ...] = FORMATS) -> None:
    parser.add_argument(
        "-o", "--output", choices=formats, default=formats[0], help=f"output format (default: {formats[0]})"
    )


def command_parser(
    subparsers: Subparsers[argparse.ArgumentParser],
    name: str,
    help_: str,
    example: str,
    *,
    command: str | None = None,
) -> argparse.ArgumentParser:
    """A subcommand with `--help` showing `example`. `command` is the key of `olm.cli.main`'s
    command table this parser runs (`"search"`, `"catalog add"`); groups of verbs leave it unset."""
    parser = subparsers.add_parser(
        name,
        help=help_,
        description=help_,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    global_flags(parser, nested=True)
    if command is not None:
        parser.set_defaults(command=command)
    return parser


def path(text: str) -> Path:
    """An argparse type: a file or directory path. `pathlib` is imported when a path is given, not
    to build the parser (it would add a tenth to `--help`)."""
    from pathlib import Path  # noqa: PLC0415

    return Path(text)


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
