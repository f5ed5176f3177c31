"""The start both processes share: exit codes and the one line a failed start logs."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from olm.process import featuregates, flags, startup, testing_seams
from olm.process import main as process
from olm_runtime.testing import pki


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="test")
    flags.add_common_flags(
        parser, lease_name="lease", leader_help="elect", metrics_port=8443, gates=featuregates.CATALOGD
    )
    return parser


def test_a_run_that_returns_exits_0() -> None:
    ran: list[testing_seams.Seams] = []

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        ran.append(seams)

    assert process.main(_parser(), run, []) == 0
    assert ran == [testing_seams.OFF]


def test_ctrl_c_exits_130() -> None:
    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        raise KeyboardInterrupt

    assert process.main(_parser(), run, []) == process.EXIT_INTERRUPTED == 130


class Recorder:
    """Stands in for the module's logger: warnings and errors as (level, event, fields) in `lines`,
    the start's info lines (feature gates, TLS profile) apart in `infos`."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []
        self.infos: list[tuple[str, dict[str, Any]]] = []

    def info(self, event: str, **fields: Any) -> None:
        self.infos.append((event, fields))

    def error(self, event: str, **fields: Any) -> None:
        self.lines.append(("error", event, fields))

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append(("warning", event, fields))


def test_a_startup_error_is_one_error_line_and_exit_code_1(monkeypatch: pytest.MonkeyPatch) -> None:
    log = Recorder()
    monkeypatch.setattr(process, "_log", log)

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        raise startup.APIServerUnreachable(cause="refused", address="https://127.0.0.1:1")

    assert process.main(_parser(), run, []) == startup.EXIT_CODE
    assert log.lines == [
        ("error", "startup.api_server_unreachable", {"address": "https://127.0.0.1:1", "cause": "refused"})
    ]


def test_testing_seams_are_named_in_a_warning_before_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    log = Recorder()
    monkeypatch.setattr(process, "_log", log)
    monkeypatch.setenv(testing_seams.POLL_MINUTE_SECONDS, "0.5")
    ran: list[testing_seams.Seams] = []

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        ran.append(seams)

    assert process.main(_parser(), run, []) == 0
    assert log.lines == [("warning", "testing_seams.enabled", {"poll_minute_seconds": 0.5})]
    assert ran == [testing_seams.Seams(poll_minute_seconds=0.5)]


def test_the_version_feature_gates_and_tls_profile_are_logged_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = Recorder()
    monkeypatch.setattr(process, "_log", log)

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        pass

    assert process.main(_parser(), run, ["--tls-profile=modern"]) == 0
    assert log.infos == [
        ("version", {"process": "test", "version": importlib.metadata.version("olm-py")}),
        ("feature_gates", {"APIV1MetasHandler": True, "GraphQLCatalogQueries": False}),
        ("tls_profile", {"profile": "Modern", "minimum_version": "TLSv1_3"}),
    ]


def test_version_prints_the_installed_distributions_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        _parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"test {importlib.metadata.version('olm-py')}\n"


def test_tracing_variables_that_do_not_parse_are_one_error_line_and_exit_code_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = Recorder()
    monkeypatch.setattr(process, "_log", log)
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    ran: list[testing_seams.Seams] = []

    async def run(args: argparse.Namespace, seams: testing_seams.Seams) -> None:
        ran.append(seams)

    assert process.main(_parser(), run, []) == startup.EXIT_CODE
    assert [(level, event) for level, event, _ in log.lines] == [("error", "tracing.invalid")]
    assert "otlp, console or none" in log.lines[0][2]["error"]
    assert ran == []


FLUSHED_AT_EXIT = """
import argparse
from olm.process import featuregates, flags
from olm.process import main as process
from olm_runtime import tracing

parser = argparse.ArgumentParser(prog="my-process")
flags.add_common_flags(
    parser, lease_name="lease", leader_help="elect", metrics_port=8443, gates=featuregates.CATALOGD
)

async def run(args, seams):
    with tracing.span("inside the run"):
        pass

raise SystemExit(process.main(parser, run, ["--log-format=text"]))
"""


def test_spans_still_queued_are_flushed_at_exit_under_the_process_name() -> None:
    # A fresh interpreter: the global tracer provider can be set once per process. The batch
    # delay is far longer than the run, so the span reaches the exporter only through the flush.
    env = {
        "PATH": os.environ.get("PATH", ""),
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_BSP_SCHEDULE_DELAY": "600000",
    }
    result = subprocess.run(
        [sys.executable, "-c", FLUSHED_AT_EXIT],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    span = json.loads(result.stdout)
    assert span["name"] == "inside the run"
    assert span["resource"]["attributes"]["service.name"] == "my-process"


# Opens TLS connections inside a process started by `process.main` and prints the resident memory
# each one added; the server end lives in the same process, so both ends count.
_TLS_CONNECTIONS_PROBE = """
import argparse, asyncio, ssl, sys
from olm.process import featuregates, flags
from olm.process import main as process

CONNECTIONS = 200

def rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))

async def run(args, seams) -> None:
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(sys.argv[2], sys.argv[3])
    client_context = ssl.create_default_context(cafile=sys.argv[1])

    async def greet(reader, writer) -> None:
        writer.write(b"hello\\n")
        await writer.drain()
        await reader.read()

    server = await asyncio.start_server(greet, "127.0.0.1", 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    opened = [await asyncio.open_connection("127.0.0.1", port, ssl=client_context)]
    await opened[0][0].readline()
    before = rss_kib()
    for _ in range(CONNECTIONS):
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_context)
        await reader.readline()
        opened.append((reader, writer))
    print((rss_kib() - before) / CONNECTIONS)
    for _, writer in opened:
        writer.close()
        await writer.wait_closed()
    server.close()
    await server.wait_closed()

parser = argparse.ArgumentParser(prog="probe")
flags.add_common_flags(
    parser, lease_name="lease", leader_help="elect", metrics_port=8443, gates=featuregates.CATALOGD
)
sys.exit(process.main(parser, run, []))
"""


def test_each_tls_connection_costs_far_less_than_asyncios_default_buffer(tmp_path: Path) -> None:
    ca = pki.CertificateAuthority.load_or_create(tmp_path)
    served = ca.issue("server", common_name="127.0.0.1", hosts=["127.0.0.1"])
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _TLS_CONNECTIONS_PROBE,
            *map(str, (ca.cert_file, served.cert_file, served.key_file)),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    per_connection_kib = float(result.stdout.strip().splitlines()[-1])
    # Both ends of each connection live in the probe: about 130 KiB with 32 KiB read buffers, about
    # 580 KiB with asyncio's default of 256 KiB.
    assert per_connection_kib < 300, per_connection_kib
    # Only the start's info lines (feature gates, TLS profile): no warning, no error.
    assert {json.loads(line)["level"] for line in result.stderr.splitlines()} == {"info"}
