"""Running one command against the cluster: the session it works with, and what its failures exit with.

`run(command, args)` loads the kubeconfig as kubectl does, connects, builds the `Session` (the API
client and the way to catalogd's content) and runs the command to its exit code; a failure becomes
one line on stderr and the exit code scripts rely on (`olm.cli.main` lists them), never a traceback.

Imported once the command line has been parsed and a command is about to run: it loads the API
client, which `--help` and usage errors never need.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from olm.api.kinds import CLUSTER_EXTENSION
from olm.cli import commands
from olm.cli.catalogs.source import ContentSource
from olm.cli.commands import CommandFailed
from olm_runtime.client import Client, ConfigError, CredentialError, errors, load_config

__all__ = ["FIELD_MANAGER", "Command", "Session", "get_extension", "run"]

FIELD_MANAGER = "olmctl"


@dataclass
class Session:
    """What every command works with."""

    client: Client
    source: ContentSource
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)


Command = Callable[[Session, argparse.Namespace], Awaitable[int]]
"""A command's function: writes its output to the session's streams and returns the exit code."""


async def get_extension(session: Session, name: str) -> dict[str, Any]:
    """ClusterExtension `name`; `CommandFailed` when there is none."""
    try:
        return dict(await session.client.get(CLUSTER_EXTENSION, name))
    except errors.NotFound:
        raise commands.not_found("clusterextension", name) from None


def run(command: Command, args: argparse.Namespace) -> int:
    """Run `command` in a session on the cluster `args` name; its exit code, or that of its failure."""
    _quiet_library_logs()
    try:
        return asyncio.run(_run(command, args))
    except _Unreachable as err:
        print(f"error: {err}", file=sys.stderr)
        return commands.EXIT_UNREACHABLE
    except (ConfigError, CredentialError) as err:
        print(f"error: kubeconfig: {err}", file=sys.stderr)
        return commands.EXIT_FAILED
    except CommandFailed as err:
        print(f"error: {err}", file=sys.stderr)
        return commands.EXIT_FAILED
    except errors.APIError as err:
        print(f"error: the API server answered {err}", file=sys.stderr)
        return commands.EXIT_FAILED
    except KeyboardInterrupt:
        return commands.EXIT_INTERRUPTED
    except Exception as err:
        message = _catalog_error(err)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return commands.EXIT_FAILED


async def _run(command: Command, args: argparse.Namespace) -> int:
    config = await load_config(kubeconfig=args.kubeconfig, context=args.context)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        source = ContentSource(
            requester=client.transport, ca_file=args.catalogd_ca, system_namespace=args.system_namespace
        )
        try:
            return await command(Session(client, source), args)
        except (errors.TransportError, TimeoutError) as err:
            raise _Unreachable(config.server, err) from err


class _Unreachable(Exception):
    def __init__(self, server: str, cause: Exception) -> None:
        # Imported here: the API server is reachable in every run that does not end up here.
        from olm.process import startup  # noqa: PLC0415

        reason = str(cause) or type(cause).__name__
        if startup.not_retried_because(cause) == startup.NOT_RETRIED_TLS:
            reason += " (the server's certificate does not verify against the kubeconfig's CA)"
        super().__init__(f"cannot reach the API server at {server}: {reason}")


def _catalog_error(error: Exception) -> str | None:
    """The message of a catalog content error (`olm.pipeline.catalogs.CatalogClientError`), else None.

    Only a command that reads catalog content can raise one, and it has imported that module by then;
    looking it up rather than importing it keeps the pipeline out of the commands that never read a
    catalog (`list`, `status`, `catalog add`)."""
    catalogs = sys.modules.get("olm.pipeline.catalogs")
    if catalogs is not None and isinstance(error, catalogs.CatalogClientError):
        return str(error.message)
    return None


def _quiet_library_logs() -> None:
    """Keep what the library code olmctl shares with the controllers logs (e.g. a catalog skipped)
    off stdout, which scripts parse, and below warnings out of people's way: one line per warning
    on stderr. That code binds its loggers when it is imported, so the command's modules are loaded
    by now; when none of them logs, structlog is not loaded and there is nothing to configure. The
    controllers' console renderer (`structlog.dev`, with `rich` where installed) is not used."""
    if "structlog" not in sys.modules:
        return
    import logging  # noqa: PLC0415

    import structlog  # noqa: PLC0415

    structlog.configure(
        processors=[structlog.processors.add_log_level, _render],
        wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING),
        logger_factory=structlog.PrintLoggerFactory(file=_Stderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )


def _render(_: Any, __: str, event: MutableMapping[str, Any]) -> str:
    """`warning: <event> key=value ...`, as olmctl's own `error: ...` lines read."""
    level = event.pop("level", "warning")
    message = event.pop("event", "")
    pairs = " ".join(f"{key}={value}" for key, value in event.items())
    return f"{level}: {message}" + (f" {pairs}" if pairs else "")


class _Stderr:
    """Whatever `sys.stderr` is when a line is written (a test's capture may replace it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()
