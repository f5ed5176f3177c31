"""Both processes, run for real, against an API server they cannot use: one JSON error line naming
the address tried and the cause, exit code 1, no traceback.

The closed-port and configuration cases need no cluster (they use no cluster fixture, so they run
even where the control plane is not built); the wrong-CA and bad-token cases talk to the session's
real control plane.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from olm.process import startup
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.pki import CertificateAuthority
from olm_runtime.testing.process import free_ports

REPO_ROOT = Path(__file__).resolve().parents[2]
API_SERVER_TIMEOUT = 2.0
DEADLINE = 60.0
"""Seconds a process may take to exit: interpreter start on a busy machine plus the timeout."""
COMPONENTS = [
    pytest.param("catalogd", id="catalogd"),
    pytest.param("operator_controller", id="operator-controller"),
]


@dataclass(frozen=True)
class Exited:
    code: int
    output: str
    events: list[dict[str, Any]]
    """Every output line that is a JSON object, in order."""

    def only(self, event: str) -> dict[str, Any]:
        matching = [e for e in self.events if e.get("event") == event]
        assert len(matching) == 1, f"expected one {event} line:\n{self.output}"
        return matching[0]

    def count(self, event: str) -> int:
        return sum(1 for e in self.events if e.get("event") == event)


def _run(
    component: str, workdir: Path, *, kubeconfig: Path | None, env: Mapping[str, str] | None = None
) -> Exited:
    """Run `olm.<component>.main` to its exit; `env` replaces the whole environment when given."""
    metrics, health = free_ports(2)
    args = [
        sys.executable,
        "-m",
        f"olm.{component}.main",
        f"--api-server-timeout={API_SERVER_TIMEOUT}",
        "--log-format=json",
        f"--metrics-bind-address=127.0.0.1:{metrics}",
        f"--health-probe-bind-address=127.0.0.1:{health}",
    ]
    if kubeconfig is not None:
        args.append(f"--kubeconfig={kubeconfig}")
    if component == "catalogd":
        # Never read: the API server check comes before the catalog server starts.
        args += [f"--tls-cert={workdir / 'tls.crt'}", f"--tls-key={workdir / 'tls.key'}"]
        args.append(f"--storage-dir={workdir / 'storage'}")
    else:
        args.append(f"--cache-dir={workdir / 'cache'}")
    completed = subprocess.run(
        args,
        cwd=REPO_ROOT,
        env=dict(os.environ if env is None else env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=DEADLINE,
        check=False,
    )
    output = completed.stdout.decode(errors="replace")
    events = []
    for line in output.splitlines():
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            events.append(parsed)
    return Exited(code=completed.returncode, output=output, events=events)


def _kubeconfig(path: Path, *, server: str, ca_file: Path | None, token: str) -> Path:
    cluster: dict[str, str] = {"server": server}
    if ca_file is not None:
        cluster["certificate-authority"] = str(ca_file)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "c",
    }
    path.write_text(json.dumps(config))
    return path


def _assert_clean_failure(exited: Exited) -> None:
    assert exited.code == startup.EXIT_CODE, exited.output
    assert "Traceback" not in exited.output, exited.output


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound (so nothing else takes it) but not listening."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_closed_port_is_retried_then_named_with_the_cause(
    component: str, closed_port: int, tmp_path: Path
) -> None:
    server = f"https://127.0.0.1:{closed_port}"
    kubeconfig = _kubeconfig(tmp_path / "kubeconfig", server=server, ca_file=None, token="unused")
    started = time.monotonic()
    exited = _run(component, tmp_path, kubeconfig=kubeconfig)
    _assert_clean_failure(exited)
    assert time.monotonic() - started < DEADLINE
    line = exited.only("startup.api_server_unreachable")
    assert line["level"] == "error"
    assert line["address"] == server
    assert f"Cannot connect to host 127.0.0.1:{closed_port}" in line["cause"]
    assert line["waited_seconds"] >= API_SERVER_TIMEOUT
    assert line["attempts"] > 1
    assert exited.count("startup.api_server_waiting") == line["attempts"] - 1


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_missing_kubeconfig_is_one_line(component: str, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-kubeconfig"
    exited = _run(component, tmp_path, kubeconfig=missing)
    _assert_clean_failure(exited)
    assert str(missing) in exited.only("startup.config_unusable")["cause"]


@pytest.mark.parametrize("component", COMPONENTS)
def test_in_cluster_without_the_service_environment_is_one_line(component: str, tmp_path: Path) -> None:
    # No --kubeconfig, no $KUBECONFIG, no ~/.kube/config: the in-cluster configuration is all left.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")
    }
    env["HOME"] = str(tmp_path)
    exited = _run(component, tmp_path, kubeconfig=None, env=env)
    _assert_clean_failure(exited)
    assert "KUBERNETES_SERVICE_HOST/PORT" in exited.only("startup.config_unusable")["cause"]


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_wrong_ca_is_reported_without_retrying(
    component: str, control_plane: ControlPlane, tmp_path: Path
) -> None:
    other_ca = CertificateAuthority.load_or_create(tmp_path / "other-ca", common_name="not the cluster's CA")
    kubeconfig = _kubeconfig(
        tmp_path / "kubeconfig", server=control_plane.server, ca_file=other_ca.cert_file, token="unused"
    )
    exited = _run(component, tmp_path, kubeconfig=kubeconfig)
    _assert_clean_failure(exited)
    line = exited.only("startup.api_server_rejected")
    assert line["address"] == control_plane.server
    assert line["ca_file"] == str(other_ca.cert_file)
    assert "certificate verify failed" in line["cause"]
    assert line["retry"] == startup.NOT_RETRIED_TLS
    assert exited.count("startup.api_server_waiting") == 0


@pytest.mark.parametrize("component", COMPONENTS)
def test_a_rejected_token_is_reported_without_retrying(
    component: str, control_plane: ControlPlane, tmp_path: Path
) -> None:
    kubeconfig = _kubeconfig(
        tmp_path / "kubeconfig",
        server=control_plane.server,
        ca_file=control_plane.ca_file,
        token="not-a-token-the-cluster-issued",
    )
    exited = _run(component, tmp_path, kubeconfig=kubeconfig)
    _assert_clean_failure(exited)
    line = exited.only("startup.api_server_rejected")
    assert line["address"] == control_plane.server
    assert line["cause"].startswith("401 ")
    assert line["retry"] == startup.NOT_RETRIED_CREDENTIALS
    assert exited.count("startup.api_server_waiting") == 0
