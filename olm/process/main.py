"""How catalogd and operator-controller start, the same way around their own wiring.

Each process's `main.py` declares its flags (`parser()`) and wires its controllers (`run(args,
seams)`); this module does the rest, once for both:

    from olm.process import main as process

    def main(argv: Sequence[str] | None = None) -> int:
        return process.main(parser(), run, argv)

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        async with process.connect(args, field_manager=FIELD_MANAGER) as client:
            ...

`main` parses the flags (`flags.parse` refuses feature gates and TLS profiles that cannot be
honoured, with argparse's exit code 2; the gates' states are logged once), makes TLS connections
read into small buffers (`tlsbuffers`),
configures logging and tracing (`olm_runtime.tracing.configure_from_env`, with the parser's `prog`
as the service name; spans still queued are flushed at exit), reads the testing seams
(`testing_seams`) and runs `run` to its end. Exit codes: 0 after a graceful stop, 130 on
Ctrl-C, and `startup.EXIT_CODE`, after one error line, when the seams or the `OTEL_*` variables do
not parse or the API server cannot be used (`startup`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence

from olm import version
from olm.process import flags, startup, testing_seams, tlsbuffers
from olm_runtime import logging, tracing
from olm_runtime.client import Client

__all__ = ["EXIT_INTERRUPTED", "Run", "connect", "main"]

EXIT_INTERRUPTED = 130
"""The shell's code for a process ended by SIGINT (128 + 2)."""

Run = Callable[[argparse.Namespace, testing_seams.Seams], Coroutine[object, object, None]]
"""A process's own part: everything between start-up and a graceful stop."""

_log = logging.get_logger("olm.process")


def main(parser: argparse.ArgumentParser, run: Run, argv: Sequence[str] | None = None) -> int:
    """Run a process declared by `parser` (with `flags.add_common_flags`); the exit code."""
    args = flags.parse(parser, argv)
    tlsbuffers.limit()
    logging.configure(format=args.log_format, level=args.log_level)
    _log.info("version", process=parser.prog, version=version.installed())
    _log.info("feature_gates", **args.features)
    _log.info("tls_profile", profile=args.tls.name, minimum_version=args.tls.effective_minimum().name)
    try:
        provider = tracing.configure_from_env(service_name=parser.prog)
    except tracing.ConfigurationError as e:
        _log.error("tracing.invalid", error=str(e))
        return startup.EXIT_CODE
    try:
        return _run(run, args)
    finally:
        if provider is not None:
            provider.shutdown()  # flushes the spans still queued


def _run(run: Run, args: argparse.Namespace) -> int:
    try:
        seams = testing_seams.Seams.from_environ()
    except testing_seams.SeamError as e:
        _log.error("testing_seams.invalid", error=str(e))
        return startup.EXIT_CODE
    if seams.enabled():
        _log.warning("testing_seams.enabled", **seams.enabled())
    try:
        asyncio.run(run(args, seams))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except startup.StartupError as e:
        _log.error(e.event, **e.fields)
        return startup.EXIT_CODE
    return 0


@contextlib.asynccontextmanager
async def connect(args: argparse.Namespace, *, field_manager: str) -> AsyncIterator[Client]:
    """The process's API client, once the API server answers (else `startup.StartupError`)."""
    config = await startup.load_config(args.kubeconfig)
    async with await Client.connect(config, field_manager=field_manager) as client:
        await startup.wait_for_api_server(client.transport, config, timeout=args.api_server_timeout)
        yield client
