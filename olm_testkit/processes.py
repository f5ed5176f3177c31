"""catalogd and operator-controller as real local processes, for the e2e suites and `make run`.

Each class owns one subprocess of `python -m olm.<component>.main` against a control plane: its own
work directory (log, storage or cache, certificates), free loopback ports, and the flags the
component takes. The shape is the same for both:

- `start()` launches the process (its output appended to `log_file`) and returns at once;
- `await wait_ready()` polls `/readyz` on the health port and fails early, with the log tail,
  when the process exits instead;
- `stop()` sends SIGTERM and waits (a clean shutdown is part of what the tests check); `kill()`
  sends SIGKILL, for crash tests;
- `log_tail()` and `metric()` read what the process wrote and exposes.

The control plane's CA signs every certificate here (catalogd's serving certificate, the
registry's), so one CA file is what each component is told to trust.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from olm.api import names
from olm.process import testing_seams
from olm_runtime.client import Client, kinds, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports
from olm_testkit import metricsreader

REPO_ROOT = Path(__file__).resolve().parents[1]
POLL_MINUTE_SECONDS = 1.0
"""catalogd's `OLM_TESTING_POLL_MINUTE_SECONDS` in tests: pollIntervalMinutes 1 is one second."""
NO_SIGNATURE_POLICY = "no-signature-policy.json"
"""The `--signature-policy` both processes get, in their work directory and never written: they
accept every image whatever the host's /etc/containers/policy.json says. A test of the policy
passes its own `--signature-policy` in `extra_args`, which comes later and wins."""
UNSCOPED = f"!{testing_seams.SCOPE_LABEL}"
"""The processes' default `OLM_TESTING_SCOPE_SELECTOR`: every object but those a test scoped to a
controller of its own (labelled `testing_seams.SCOPE_LABEL`)."""


class Subprocess:
    """What both components share once started: readiness, shutdown, log and metrics.

    Subclasses are dataclasses that provide these attributes and build the command line.
    """

    component: str
    control_plane: ControlPlane
    workdir: Path
    ports: dict[str, int]
    process: subprocess.Popen[bytes] | None
    metrics_token: str | None = None
    """The bearer token `scrape` sends; made on first use."""

    @property
    def log_file(self) -> Path:
        return self.workdir / f"{self.component}.log"

    def _launch(self, args: list[str], env: Mapping[str, str] | None = None) -> None:
        log = self.log_file.open("ab")
        log.write(f"\n===== start {' '.join(args)}\n".encode())
        log.flush()
        # Unbuffered, so the log is complete up to the moment a test fails and prints it.
        environment = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT, env=environment
        )
        log.close()

    async def wait_ready(self, timeout: float = 60.0) -> None:
        async def ready() -> bool:
            if self.process is None or self.process.poll() is not None:
                raise AssertionError(f"{self.component} exited:\n{self.log_tail()}")
            url = f"http://127.0.0.1:{self.ports['health']}/readyz"
            try:
                async with aiohttp.ClientSession() as session, session.get(url) as response:
                    return response.status == 200
            except aiohttp.ClientError:
                return False

        await eventually(ready, what=f"{self.component} to be ready", timeout=timeout)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Started and ready inside the block; stopped after it, printing the log tail when the
        exit was not clean (a fixture's teardown cannot fail the test that already ran)."""
        self.start()
        try:
            await self.wait_ready()
            yield
        finally:
            code = self.stop()
            if code not in (0, None):
                print(f"{self.component} exited with {code}:\n{self.log_tail()}")

    def start(self) -> None:
        raise NotImplementedError

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM and wait; the exit code (None if it was not running). Fails if it hangs."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return process.returncode if process is not None else None
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(
                f"{self.component} did not stop within {timeout}s of SIGTERM:\n{self.log_tail()}"
            ) from None

    def kill(self) -> int | None:
        """SIGKILL, as a crash would: no shutdown code runs. The exit code (None if not running)."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return process.returncode if process is not None else None
        process.kill()
        return process.wait()

    def log_tail(self, lines: int = 80) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    async def scrape(self) -> str:
        """The `/metrics` page, read as a scraper in a cluster reads it: over HTTPS, verifying the
        serving certificate (the control plane's CA issued it), with the token of a ServiceAccount
        bound to a metrics-reader ClusterRole (made once per process object, again when rejected;
        `reader_token` returns it only once the API server allows it, so the first scrape is not
        refused for a binding the authorizer has yet to see)."""
        url = f"https://127.0.0.1:{self.ports['metrics']}/metrics"
        trust = ssl.create_default_context(cafile=str(self.control_plane.ca_file))
        for _ in range(2):
            if self.metrics_token is None:
                config = await load_config(kubeconfig=self.control_plane.kubeconfig)
                async with await Client.connect(config, field_manager=metricsreader.FIELD_MANAGER) as admin:
                    self.metrics_token = await metricsreader.reader_token(admin)
            headers = {"Authorization": f"Bearer {self.metrics_token}"}
            async with (
                aiohttp.ClientSession() as session,
                session.get(url, headers=headers, ssl=trust) as response,
            ):
                text = await response.text()
            if response.status == 200:
                return text
            if response.status != 401:
                break
            self.metrics_token = None  # expired (tokens last an hour): make a new one
        raise AssertionError(f"{self.component} /metrics answered {response.status}: {text}")

    async def metric(self, name: str) -> float:
        text = await self.scrape()
        match = re.search(rf"^{re.escape(name)} ([0-9.e+-]+)$", text, re.MULTILINE)
        if match is None:
            raise AssertionError(f"metric {name} not found")
        return float(match.group(1))


async def token_kubeconfig(
    kube: Client, control_plane: ControlPlane, *, namespace: str, name: str, path: Path
) -> Path:
    """Write a kubeconfig authenticating as ServiceAccount `namespace/name` with a one-hour token,
    so a process runs with exactly that account's permissions (e.g. the shipped RBAC)."""
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": 3600},
    }
    token = await kube.create_subresource(kinds.SERVICE_ACCOUNT, name, "token", request, namespace=namespace)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "c",
                "cluster": {
                    "server": control_plane.server,
                    "certificate-authority": str(control_plane.ca_file),
                },
            }
        ],
        "users": [{"name": name, "user": {"token": token["status"]["token"]}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": name}}],
        "current-context": "c",
    }
    await asyncio.to_thread(path.write_text, json.dumps(config))
    return path


def trust_dir(directory: Path, ca_file: Path) -> Path:
    """A directory holding one PEM CA: the `--*-cas-dir` flags take directories."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(ca_file, directory / "ca.crt")
    return directory


def serving_pair(
    control_plane: ControlPlane, directory: Path, name: str, *, common_name: str, address: str = "127.0.0.1"
) -> tuple[Path, Path]:
    """A serving certificate for loopback (and `address`) from the control plane's CA, as `tls.crt`
    and `tls.key` in `directory` (the processes watch the directory, and clients verify against
    that CA)."""
    pair = control_plane.certificate_authority().issue(
        name, common_name=common_name, hosts=[*dict.fromkeys(["127.0.0.1", address]), "localhost"]
    )
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(pair.cert_file, directory / "tls.crt")
    shutil.copy(pair.key_file, directory / "tls.key")
    return directory / "tls.crt", directory / "tls.key"


@dataclass
class CatalogdProcess(Subprocess):
    """One catalogd replica as a subprocess; `start()` is idempotent per run, `stop()` sends SIGTERM."""

    control_plane: ControlPlane
    workdir: Path
    leader_elect: bool = False
    lease_namespace: str = "default"
    lease_name: str = "catalogd-e2e"
    webhook: bool = True
    extra_args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    """Added to (and overriding) this process's environment (e.g. `OTEL_*` to export traces)."""
    address: str = "127.0.0.1"
    """Where the content server listens, and the host of the URLs it writes into status: loopback
    unless a client must reach it otherwise (through an HTTP proxy, which never relays loopback)."""
    scope_selector: str | None = UNSCOPED
    """The ClusterCatalogs it reconciles (`OLM_TESTING_SCOPE_SELECTOR`); None: all, as shipped."""
    kubeconfig: Path | None = None
    """Defaults to the control plane's admin kubeconfig."""
    python: str = sys.executable
    """The interpreter that runs it (`hack.bench.shipped` gives the image's set of packages)."""
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    component: str = field(default="catalogd", init=False)

    @property
    def storage_dir(self) -> Path:
        return self.workdir / "storage"

    @property
    def webhook_cert_dir(self) -> Path:
        return self.workdir / "webhook-certs"

    @property
    def catalogs_url(self) -> str:
        return f"https://{self.address}:{self.ports['catalogs']}/catalogs"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.ports:
            metrics, health, catalogs, hook = free_ports(4)
            self.ports = {"metrics": metrics, "health": health, "catalogs": catalogs, "webhook": hook}
        name = f"catalogd-{hashlib.sha256(str(self.workdir).encode()).hexdigest()[:10]}"
        cert, key = serving_pair(
            self.control_plane, self.webhook_cert_dir, name, common_name="catalogd", address=self.address
        )
        cas = self.workdir / "pull-cas"
        cas.mkdir(exist_ok=True)
        shutil.copy(self.control_plane.ca_file, cas / "registry-ca.crt")
        args = [
            self.python,
            "-m",
            "olm.catalogd.main",
            f"--kubeconfig={self.kubeconfig or self.control_plane.kubeconfig}",
            f"--metrics-bind-address=127.0.0.1:{self.ports['metrics']}",
            f"--health-probe-bind-address=127.0.0.1:{self.ports['health']}",
            f"--catalogs-server-addr={self.address}:{self.ports['catalogs']}",
            f"--tls-cert={cert}",
            f"--tls-key={key}",
            f"--storage-dir={self.storage_dir}",
            f"--pull-cas-dir={cas}",
            f"--external-address={self.address}:{self.ports['catalogs']}",
            # A file that does not exist (no mirror rules), not the machine's: tests stay hermetic.
            f"--registries-conf={self.workdir / 'registries.conf'}",
            f"--signature-policy={self.workdir / NO_SIGNATURE_POLICY}",
            "--log-format=console",
            "--log-level=info",
            *self.extra_args,
        ]
        if self.webhook:
            args += [
                f"--webhook-bind-address=127.0.0.1:{self.ports['webhook']}",
                f"--webhook-cert-dir={self.webhook_cert_dir}",
            ]
        if self.leader_elect:
            args += [
                "--leader-elect",
                f"--leader-election-namespace={self.lease_namespace}",
                f"--leader-election-id={self.lease_name}",
            ]
        seams = {testing_seams.POLL_MINUTE_SECONDS: str(POLL_MINUTE_SECONDS)}
        if self.scope_selector is not None:
            seams[testing_seams.SCOPE_SELECTOR] = self.scope_selector
        self._launch(args, {**seams, **(self.env or {})})


@dataclass
class OperatorControllerProcess(Subprocess):
    """One operator-controller replica as a subprocess, trusting the control plane's CA for both
    catalogd's HTTPS server and the image registries (the CA issued both serving certificates)."""

    control_plane: ControlPlane
    workdir: Path
    system_namespace: str = names.DEFAULT_SYSTEM_NAMESPACE
    leader_elect: bool = False
    lease_namespace: str = names.DEFAULT_SYSTEM_NAMESPACE
    lease_name: str = "operator-controller-e2e"
    extra_args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    """Added to (and overriding) this process's environment."""
    scope_selector: str | None = UNSCOPED
    """The ClusterExtensions and ClusterObjectSets it reconciles (`OLM_TESTING_SCOPE_SELECTOR`);
    None: all, as shipped."""
    kubeconfig: Path | None = None
    """Defaults to the control plane's admin kubeconfig."""
    python: str = sys.executable
    """The interpreter that runs it (`hack.bench.shipped` gives the image's set of packages)."""
    ports: dict[str, int] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    component: str = field(default="operator-controller", init=False)

    @property
    def cache_dir(self) -> Path:
        return self.workdir / "cache"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.ports:
            metrics, health = free_ports(2)
            self.ports = {"metrics": metrics, "health": health}
        catalogd_cas = trust_dir(self.workdir / "catalogd-cas", self.control_plane.ca_file)
        pull_cas = trust_dir(self.workdir / "pull-cas", self.control_plane.ca_file)
        # Served over TLS with a certificate from the plane's CA, so `scrape` verifies what it reads.
        name = f"operator-controller-{hashlib.sha256(str(self.workdir).encode()).hexdigest()[:10]}"
        cert, key = serving_pair(
            self.control_plane, self.workdir / "metrics-certs", name, common_name="operator-controller"
        )
        args = [
            self.python,
            "-m",
            "olm.operator_controller.main",
            f"--kubeconfig={self.kubeconfig or self.control_plane.kubeconfig}",
            f"--system-namespace={self.system_namespace}",
            f"--cache-dir={self.cache_dir}",
            f"--catalogd-cas-dir={catalogd_cas}",
            f"--pull-cas-dir={pull_cas}",
            f"--signature-policy={self.workdir / NO_SIGNATURE_POLICY}",
            f"--metrics-bind-address=127.0.0.1:{self.ports['metrics']}",
            f"--tls-cert={cert}",
            f"--tls-key={key}",
            f"--health-probe-bind-address=127.0.0.1:{self.ports['health']}",
            "--leader-elect" if self.leader_elect else "--no-leader-elect",
            f"--leader-election-namespace={self.lease_namespace}",
            f"--leader-election-id={self.lease_name}",
            f"--registries-conf={self.workdir / 'registries.conf'}",
            "--log-format=console",
            "--log-level=info",
            *self.extra_args,
        ]
        seams = {} if self.scope_selector is None else {testing_seams.SCOPE_SELECTOR: self.scope_selector}
        self._launch(args, {**seams, **(self.env or {})})
