"""`olmctl` (also the kubectl plugin `kubectl olm`): catalogs and their packages from the command line.

    olmctl catalog add demo registry.example/catalogs/demo:latest --poll-interval 10
    olmctl catalog list
    olmctl search green
    olmctl package show kube-green
    olmctl package versions kube-green --channel alpha -o json

The cluster is found as kubectl finds it: `--kubeconfig`, else `$KUBECONFIG` (merged), else
`~/.kube/config`, else in-cluster; `--context` picks another context. Catalog content is read from
the URL each ClusterCatalog advertises (`status.urls.base`), trusting `--catalogd-ca` or the system
store, and through the API server's service proxy when that URL cannot be reached from here.

Exit codes, for scripts:

- 0: success (an empty listing or search is a success);
- 1: the operation failed: the API server refused it, an object or package was not found, a
  catalog's content could not be read, the kubeconfig is unusable;
- 2: usage error (unknown command or flag, missing argument);
- 3: the cluster cannot be reached: no connection to the API server, or its TLS certificate does
  not verify.

Errors are one line on stderr, never a traceback.

The parser is built from each command family's `parsers` module alone; the module of the command
that runs is imported only then (`olm.cli.commands.Handler`), with the API client
(`olm.cli.session`), so `--help` and usage errors answer at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from olm.cli import catalogs, extensions, migrate, packages, rbac, status
from olm.cli.commands import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    Handler,
)
from olm.cli.parsing import global_flags

__all__ = [
    "COMMANDS",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "FAMILIES",
    "build_parser",
    "main",
]

FAMILIES = (catalogs, packages, extensions, rbac, migrate, status)
"""In the order `--help` lists their commands."""

COMMANDS: dict[str, Handler] = {
    name: handler for family in FAMILIES for name, handler in family.COMMANDS.items()
}


class _PrintVersion(argparse.Action):
    """`--version`, reading the installed version only when asked (argparse's own action takes the
    text when the parser is built, on every start)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(
            option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0, help=help
        )

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from olm import version  # noqa: PLC0415 (importlib.metadata only when asked)

        print(f"{parser.prog} {version.installed()}")
        parser.exit()


def build_parser(prog: str = "olmctl") -> argparse.ArgumentParser:
    """The whole command line; `args.command` names the command as a key of `COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Find, install, permit and explain OLM v1 extensions and their catalogs.",
        epilog="example:\n  olmctl --context dev catalog list\n\n"
        "exit codes: 0 success, 1 failed, 2 usage error, 3 cluster unreachable",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_PrintVersion, help="print olmctl's version and exit")
    global_flags(parser, nested=False)
    top = parser.add_subparsers(dest="group", metavar="COMMAND")
    for family in FAMILIES:
        family.add_commands(top)
    return parser


def _command_name(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The key of `COMMANDS` the arguments name, or a usage error when the command is incomplete."""
    if args.group is None:
        parser.error("a command is required")
    command = getattr(args, "command", None)
    if command is None:
        parser.error(f"{args.group}: a verb is required (see olmctl {args.group} --help)")
    return str(command)


def main(argv: Sequence[str] | None = None) -> int:
    prog = "kubectl olm" if os.path.basename(sys.argv[0]) == "kubectl-olm" else "olmctl"
    parser = build_parser(prog)
    args = parser.parse_args(argv)  # exits 2 on a usage error, 0 on --help
    command = _command_name(parser, args)
    if (
        command == "catalog update"
        and args.image is None
        and args.poll_interval is None
        and args.priority is None
    ):
        parser.error("catalog update: nothing to change; give --image, --poll-interval or --priority")
    function = COMMANDS[command].load()
    # Imported now that a command runs: the API client and everything it loads.
    from olm.cli import session  # noqa: PLC0415

    return session.run(function, args)


if __name__ == "__main__":
    sys.exit(main())
