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
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from olm import startup
from olm.cli import commands, explain, graph, install, rbac
from olm.cli.commands import Command, CommandFailed, Session
from olm.cli.content import ContentSource
from olm.cli.parsing import command_parser, global_flags, output_flag, positive
from olm.pipeline.catalogs import CatalogClientError
from olm_runtime import logging as runtime_logging
from olm_runtime.client import Client, ConfigError, CredentialError, errors, load_config

__all__ = ["COMMANDS", "EXIT_FAILED", "EXIT_OK", "EXIT_UNREACHABLE", "EXIT_USAGE", "build_parser", "main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3

FIELD_MANAGER = "olmctl"

# Top-level commands that live in modules of their own (each adds its parsers and its handlers).
_EXTENSION_COMMANDS = (install, rbac, explain)

COMMANDS: dict[str, Command] = {
    **commands.COMMANDS,
    **graph.COMMANDS,
    **{name: handler for module in _EXTENSION_COMMANDS for name, handler in module.COMMANDS.items()},
}


def build_parser(prog: str = "olmctl") -> argparse.ArgumentParser:
    """The whole command line; `args.command` names the command as a key of `COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Find, install, permit and explain OLM v1 extensions and their catalogs.",
        epilog="example:\n  olmctl --context dev catalog list\n\n"
        "exit codes: 0 success, 1 failed, 2 usage error, 3 cluster unreachable",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    global_flags(parser, nested=False)
    top = parser.add_subparsers(dest="group", metavar="COMMAND")

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
    graph.add_commands(package_verbs)
    for module in _EXTENSION_COMMANDS:
        module.add_commands(top)
    return parser


def _command_name(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """The key of `COMMANDS` the arguments name, or a usage error when the command is incomplete."""
    if args.group is None:
        parser.error("a command is required")
    command = getattr(args, "command", None)
    if command is None:
        parser.error(f"{args.group}: a verb is required (see olmctl {args.group} --help)")
    return str(command)


async def _run(command: str, args: argparse.Namespace) -> int:
    config = await load_config(kubeconfig=args.kubeconfig, context=args.context)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        source = ContentSource(
            requester=client.transport, ca_file=args.catalogd_ca, system_namespace=args.system_namespace
        )
        try:
            return await COMMANDS[command](Session(client, source), args)
        except (errors.TransportError, TimeoutError) as err:
            raise _Unreachable(config.server, err) from err


class _Unreachable(Exception):
    def __init__(self, server: str, cause: Exception) -> None:
        reason = str(cause) or type(cause).__name__
        if startup.not_retried_because(cause) == startup.NOT_RETRIED_TLS:
            reason += " (the server's certificate does not verify against the kubeconfig's CA)"
        super().__init__(f"cannot reach the API server at {server}: {reason}")


def main(argv: Sequence[str] | None = None) -> int:
    prog = "kubectl olm" if Path(sys.argv[0]).name == "kubectl-olm" else "olmctl"
    parser = build_parser(prog)
    args = parser.parse_args(argv)  # exits 2 on a usage error, 0 on --help
    command = _command_name(parser, args)
    # The library code olmctl shares with the controllers logs as they do (e.g. a catalog skipped):
    # keep that off stdout, which scripts parse, and below warnings out of people's way.
    runtime_logging.configure(format="text", level="warning")
    if (
        command == "catalog update"
        and args.image is None
        and args.poll_interval is None
        and args.priority is None
    ):
        parser.error("catalog update: nothing to change; give --image, --poll-interval or --priority")
    try:
        return asyncio.run(_run(command, args))
    except _Unreachable as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except (ConfigError, CredentialError) as err:
        print(f"error: kubeconfig: {err}", file=sys.stderr)
        return EXIT_FAILED
    except CommandFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_FAILED
    except CatalogClientError as err:
        print(f"error: {err.message}", file=sys.stderr)
        return EXIT_FAILED
    except errors.APIError as err:
        print(f"error: the API server answered {err}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
