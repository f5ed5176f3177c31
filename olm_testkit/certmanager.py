"""cert-manager beside a local control plane: its CRDs, controller and cainjector.

The controller and cainjector run as host processes against the control plane's admin kubeconfig,
with leader election off and no metrics or health servers (one replica on loopback needs neither,
and no port can be lost to a race). They are found next to the control-plane binaries, as
`cert-manager-controller`, `cert-manager-cainjector` and `cert-manager-crds.yaml`; this repository
builds them from the pinned cert-manager module with `python -m hack.controlplane build`.

`start()` installs the CRDs (server-side apply, then waits until each kind is served) and starts
both processes; `wait_ready()` returns once a self-signed Issuer becomes Ready, which needs the
controller to be watching; `up()` is both. Starting is idempotent: processes recorded in the work
directory and still alive are reused, so a session (or a shell) starts cert-manager once. The
methods that talk to the API server are coroutines, so a plain asyncio script runs
`await CertManager(plane, workdir).up()`; `stop()` and `check()` only signal or inspect processes and
are plain functions, callable from a finalizer or a shell's `down`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml

from olm_runtime.client import Client, GroupVersionKind, load_config
from olm_runtime.testing import process, settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually

CONTROLLER = "cert-manager-controller"
CAINJECTOR = "cert-manager-cainjector"
COMPONENTS = (CONTROLLER, CAINJECTOR)
CRDS_FILE = "cert-manager-crds.yaml"

NAMESPACE = "cert-manager"
"""Holds the Secrets ClusterIssuers refer to (the controller's cluster resource namespace) and the
Issuer that `wait_ready` probes with."""
ISSUER = GroupVersionKind("cert-manager.io", "v1", "Issuer")
CERTIFICATE = GroupVersionKind("cert-manager.io", "v1", "Certificate")
CLUSTER_ISSUER = GroupVersionKind("cert-manager.io", "v1", "ClusterIssuer")
_FIELD_MANAGER = "olm-testing-cert-manager"
_READINESS_ISSUER = "olm-testing-readiness"


class CertManager:
    def __init__(self, control_plane: ControlPlane, workdir: Path, *, timeout: float = 60.0) -> None:
        self.control_plane = control_plane
        self.workdir = workdir
        self.timeout = timeout
        """Seconds each wait (CRDs served, Issuer Ready) may take."""
        self._pids: dict[str, int] = {}

    @property
    def pids(self) -> dict[str, int]:
        """The process id of each started component (empty when not started)."""
        return dict(self._pids)

    @property
    def binary_dir(self) -> Path:
        return self.control_plane.options.binary_dir

    @property
    def crds_file(self) -> Path:
        return self.binary_dir / CRDS_FILE

    @property
    def logs_dir(self) -> Path:
        return self.workdir / "logs"

    @property
    def _state_file(self) -> Path:
        return self.workdir / "state.json"

    def log_file(self, name: str) -> Path:
        return self.logs_dir / f"{name}.log"

    def log_tail(self, name: str, lines: int = 25) -> str:
        return process.log_tail(self.log_file(name), lines)

    def crds(self) -> list[dict[str, Any]]:
        """The CRDs to install, as the build rendered them from the pinned cert-manager chart."""
        return [d for d in yaml.safe_load_all(self.crds_file.read_text()) if d]

    async def up(self) -> float:
        """Start (or reuse) cert-manager and wait until it issues; return the seconds it took."""
        started = time.monotonic()
        await self.start()
        await self.wait_ready()
        return time.monotonic() - started

    async def start(self) -> None:
        """Install the CRDs and start the controller and cainjector, unless they already run."""
        if self._reuse():
            return
        missing = [name for name in (*COMPONENTS, CRDS_FILE) if not (self.binary_dir / name).is_file()]
        if missing:
            raise process.ComponentFailure(
                f"{', '.join(missing)} missing from {self.binary_dir}: build them with "
                "`python -m hack.controlplane build`"
            )
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        async with await self._client() as client:
            await self._install_crds(client)
            await client.apply(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}, force=True
            )
        kubeconfig = str(self.control_plane.kubeconfig)
        commands = {
            CONTROLLER: ["--kubeconfig", kubeconfig, "--cluster-resource-namespace", NAMESPACE],
            # The cainjector's Certificate data source needs the CRDs served before it starts.
            CAINJECTOR: ["--kubeconfig", kubeconfig],
        }
        for name, args in commands.items():
            self._pids[name] = process.spawn(
                [str(self.binary_dir / name), *args],
                log_file=self.log_file(name),
                tie_to_parent=self.control_plane.options.tie_to_parent,
            )
        self._state_file.write_text(json.dumps({"pids": self._pids}))

    async def wait_ready(self) -> None:
        """Return once a self-signed Issuer is Ready; fail with a log tail if a process dies."""
        issuer = {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": {"name": _READINESS_ISSUER, "namespace": NAMESPACE},
            "spec": {"selfSigned": {}},
        }
        async with await self._client() as client:
            await client.apply(issuer, force=True)

            async def ready() -> bool:
                self.check()
                current = await client.get(ISSUER, _READINESS_ISSUER, namespace=NAMESPACE)
                return condition_true(current, "Ready")

            await self._eventually(ready, what="cert-manager to mark a self-signed Issuer Ready")

    def check(self) -> None:
        """Raise ComponentFailure, with the tail of its log, if a started process has exited."""
        for name, pid in self._pids.items():
            if not process.is_alive(pid):
                raise process.ComponentFailure(f"{name} exited:\n{self.log_tail(name)}")

    def stop(self) -> None:
        """Stop the processes recorded in the work directory (the CRDs and objects stay)."""
        for pid in self._load().values():
            process.stop(pid)
        self._state_file.unlink(missing_ok=True)
        self._pids = {}

    async def _client(self) -> Client:
        config = await load_config(kubeconfig=self.control_plane.kubeconfig)
        return await Client.connect(config, field_manager=_FIELD_MANAGER)

    async def _install_crds(self, client: Client) -> None:
        crds = self.crds()
        for crd in crds:
            await client.apply(crd, force=True)
        for crd in crds:
            await self._reporting(settle.crd_served(client, crd["metadata"]["name"], timeout=self.timeout))

    async def _eventually(self, check: Callable[[], Awaitable[bool]], *, what: str) -> None:
        await self._reporting(eventually(check, what=what, timeout=self.timeout))

    async def _reporting(self, waiting: Awaitable[None]) -> None:
        """Await `waiting`; a timeout is raised as a ComponentFailure carrying the components' logs."""
        try:
            await waiting
        except AssertionError as timeout:
            logs = "\n".join(f"--- {name} ---\n{self.log_tail(name)}" for name in self._pids)
            raise process.ComponentFailure(f"{timeout}\n{logs}") from None

    def _load(self) -> dict[str, int]:
        try:
            return {name: int(pid) for name, pid in json.loads(self._state_file.read_text())["pids"].items()}
        except (FileNotFoundError, KeyError, ValueError):
            return {}

    def _reuse(self) -> bool:
        pids = self._load()
        if set(pids) == set(COMPONENTS) and all(process.is_alive(pid) for pid in pids.values()):
            self._pids = pids
            return True
        self.stop()  # a partial or stale record: stop what is left and start afresh
        return False


def condition_true(obj: dict[str, Any], condition: str) -> bool:
    conditions = obj.get("status", {}).get("conditions", [])
    return any(c.get("type") == condition and c.get("status") == "True" for c in conditions)


__all__ = [
    "CAINJECTOR",
    "CERTIFICATE",
    "CLUSTER_ISSUER",
    "COMPONENTS",
    "CONTROLLER",
    "CRDS_FILE",
    "ISSUER",
    "NAMESPACE",
    "CertManager",
    "condition_true",
]
