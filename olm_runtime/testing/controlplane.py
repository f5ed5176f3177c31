"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok (simulated nodes, so Pods run and Deployments become Available).

Unlike envtest, the controller-manager and scheduler run too: garbage collection, namespace
deletion, Deployments and ServiceAccounts behave as in a cluster. The API server authorizes with
Node and RBAC, issues ServiceAccount tokens (TokenRequest) and calls admission webhooks.

`up()` is idempotent: when the state directory describes a running, healthy control plane it is
reused; a stale one (its processes gone) is cleaned and started afresh. `down()` stops every process
by the pid recorded at start and waits until none of their ports listens.

The binaries come from a directory (`binary_dir`) holding `etcd`, `kube-apiserver`,
`kube-controller-manager`, `kube-scheduler`, `kwok` and `kwok-stages.yaml`: `binaries.ensure()`
(`python -m olm_runtime.testing binaries`) builds the pinned ones into a cache and returns theirs.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from olm_runtime.testing import flags, process
from olm_runtime.testing._rest import RESTClient
from olm_runtime.testing.pki import CertificateAuthority, KeyPair, write_signing_key

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
_AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [{"level": "Metadata", "userGroups": ["system:serviceaccounts"]}, {"level": "None"}],
}
"""See `ControlPlane.audit_log`. The controllers and tests act as admin, so the log stays small."""
_PORTS = ("etcd", "etcd-peer", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")


@dataclass(frozen=True, kw_only=True)
class ControlPlaneOptions:
    binary_dir: Path
    """Directory with the component binaries and `kwok-stages.yaml`."""
    state_dir: Path
    """Certificates, etcd data, logs, pids and the admin kubeconfig live here."""
    nodes: int = 3
    """How many kwok nodes to create."""
    tie_to_parent: bool = False
    """Stop the components when the process that started them exits (test sessions); a shell's
    `up` leaves this off so the control plane outlives the command."""
    start_timeout: float = 90.0
    """Seconds each component may take to become healthy."""
    apiserver_args: tuple[str, ...] = ()
    """Extra kube-apiserver flags (e.g. `--watch-cache-sizes=...` for tests that force 410 Gone)."""
    address: str = "127.0.0.1"
    """The address the API server listens on and advertises. Loopback unless something outside the
    host's loopback must reach it: Pods of a real node in a network namespace of its own reach it at
    the host end of that namespace's veth (as olm-py's real node does)."""


@dataclass
class _State:
    ports: dict[str, int]
    pids: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> _State | None:
        try:
            data = json.loads(path.read_text())
            return cls(ports=dict(data["ports"]), pids=dict(data["pids"]))
        except (FileNotFoundError, KeyError, ValueError):
            return None

    def save(self, path: Path) -> None:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"ports": self.ports, "pids": self.pids}, indent=2))
        tmp.replace(path)


class ControlPlane:
    def __init__(self, options: ControlPlaneOptions) -> None:
        self.options = options
        self.state_dir = options.state_dir
        self._state: _State | None = None

    # Paths and clients -----------------------------------------------------------------------

    @property
    def kubeconfig(self) -> Path:
        """Admin kubeconfig (user `admin` in group `system:masters`)."""
        return self.state_dir / "kubeconfig"

    @property
    def pki_dir(self) -> Path:
        return self.state_dir / "pki"

    @property
    def ca_file(self) -> Path:
        return self.pki_dir / "ca.crt"

    @property
    def admin(self) -> KeyPair:
        return KeyPair(cert_file=self.pki_dir / "admin.crt", key_file=self.pki_dir / "admin.key")

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def audit_log(self) -> Path:
        """The API server's audit log, one JSON event per line: every request made by a
        ServiceAccount (group `system:serviceaccounts`) at Metadata level, nothing else, so tests
        can count what an installer ServiceAccount was refused (`responseStatus.code` 403)."""
        return self.logs_dir / "audit.log"

    @property
    def _audit_policy(self) -> Path:
        return self.state_dir / "audit-policy.json"

    @property
    def _state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def ports(self) -> dict[str, int]:
        if self._state is None:
            raise RuntimeError("the control plane is not up")
        return self._state.ports

    @property
    def server(self) -> str:
        return f"https://{self.options.address}:{self.ports['kube-apiserver']}"

    @property
    def rest(self) -> RESTClient:
        return RESTClient(
            server=self.server,
            ca_file=self.ca_file,
            cert_file=self.admin.cert_file,
            key_file=self.admin.key_file,
        )

    def certificate_authority(self) -> CertificateAuthority:
        """The CA that signed the API server's certificate; use it for webhook servers and registries."""
        return CertificateAuthority.load_or_create(self.pki_dir)

    # Lifecycle -------------------------------------------------------------------------------

    def up(self) -> float:
        """Start (or reuse) the control plane; return the seconds it took until nodes were Ready."""
        started = time.monotonic()
        existing = _State.load(self._state_file)
        if existing is not None:
            self._state = existing
            if self._healthy():
                return time.monotonic() - started
            self.down()
        self._clean()
        for attempt in range(3):
            try:
                self._start_all()
                break
            except process.ComponentFailure as failure:
                self.down()
                if attempt == 2 or "address already in use" not in str(failure):
                    raise
                self._clean()
        return time.monotonic() - started

    def down(self) -> None:
        """Stop every component this state directory records, newest first; leave no listener."""
        state = self._state or _State.load(self._state_file)
        if state is None:
            return
        for name in reversed(COMPONENTS):
            pid = state.pids.get(name)
            if pid is not None:
                process.stop(pid)
        process.wait_until(
            lambda: not any(process.port_is_listening(p) for p in state.ports.values()),
            timeout=15,
            what="the control plane's ports to close",
        )
        self._state_file.unlink(missing_ok=True)
        self._state = None

    def stop_component(self, name: str, *, grace: float = 15.0) -> None:
        """Stop one component (e.g. the API server, to test watch recovery): SIGTERM, then SIGKILL
        if it is still running after `grace` seconds (0: SIGKILL at once, a crash)."""
        pid = self._require_state().pids.pop(name)
        process.stop(pid, timeout=grace)
        self._require_state().save(self._state_file)

    def start_component(self, name: str) -> None:
        """Start one stopped component again on its original port and wait until it is healthy."""
        self._start(name)
        self._wait_healthy(name)

    def check(self) -> None:
        """Raise ComponentFailure naming every component that has died, with the tail of its log."""
        state = self._require_state()
        dead = [name for name, pid in state.pids.items() if not process.is_alive(pid)]
        if dead:
            details = "\n".join(
                f"--- {n} ({self.logs_dir / n}.log):\n{process.log_tail(self._log(n))}" for n in dead
            )
            raise process.ComponentFailure(f"control plane component(s) died: {', '.join(dead)}\n{details}")

    def pids(self) -> dict[str, int]:
        """The process id of each running component, by name."""
        return dict(self._require_state().pids)

    def memory(self) -> dict[str, int]:
        """Resident memory in bytes of each running component."""
        return {name: process.rss_bytes(pid) for name, pid in self._require_state().pids.items()}

    # Internals -------------------------------------------------------------------------------

    def _require_state(self) -> _State:
        if self._state is None:
            raise RuntimeError("the control plane is not up")
        return self._state

    def _log(self, name: str) -> Path:
        return self.logs_dir / f"{name}.log"

    def _healthy(self) -> bool:
        state = self._require_state()
        if set(state.pids) != set(COMPONENTS) or not all(
            process.is_alive(pid) for pid in state.pids.values()
        ):
            return False
        try:
            return self.rest.raw("GET", "/readyz")[0] == 200
        except OSError:
            return False

    def _clean(self) -> None:
        if self.state_dir.exists():
            shutil.rmtree(self.state_dir)
        self.state_dir.mkdir(parents=True)
        self.logs_dir.mkdir()

    def _start_all(self) -> None:
        self._check_binaries()
        self._state = _State(ports=dict(zip(_PORTS, process.free_ports(len(_PORTS)), strict=True)))
        self._write_pki()
        self._write_kubeconfig()
        self._audit_policy.write_text(json.dumps(_AUDIT_POLICY, indent=2))
        for name in COMPONENTS:
            self._start(name)
            self._wait_healthy(name)
            if name == "kube-apiserver":
                self._create_nodes()
        process.wait_until(
            self._nodes_ready,
            timeout=self.options.start_timeout,
            what="kwok nodes to become Ready",
            alive=self.check,
        )

    def _check_binaries(self) -> None:
        wanted = [*COMPONENTS, "kwok-stages.yaml"]
        missing = [name for name in wanted if not (self.options.binary_dir / name).is_file()]
        if missing:
            raise process.ComponentFailure(
                f"missing in {self.options.binary_dir}: {', '.join(missing)} "
                "(`python -m olm_runtime.testing binaries` builds them and prints their directory)"
            )

    def _write_pki(self) -> None:
        ca = CertificateAuthority.load_or_create(self.pki_dir)
        ca.issue(
            "apiserver",
            common_name="kube-apiserver",
            hosts=[
                *dict.fromkeys(["127.0.0.1", self.options.address]),
                "localhost",
                "10.0.0.1",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
            ],
        )
        ca.issue("admin", common_name="admin", organizations=["system:masters"], client=True)
        ca.issue(
            "apiserver-kubelet-client",
            common_name="kube-apiserver-kubelet-client",
            organizations=["system:masters"],
            client=True,
        )
        write_signing_key(self.pki_dir / "sa.key", self.pki_dir / "sa.pub")

    def _write_kubeconfig(self) -> None:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "olm-py",
                    "cluster": {"server": self.server, "certificate-authority": str(self.ca_file)},
                }
            ],
            "users": [
                {
                    "name": "admin",
                    "user": {
                        "client-certificate": str(self.admin.cert_file),
                        "client-key": str(self.admin.key_file),
                    },
                }
            ],
            "contexts": [{"name": "olm-py", "context": {"cluster": "olm-py", "user": "admin"}}],
            "current-context": "olm-py",
        }
        self.kubeconfig.write_text(json.dumps(config, indent=2))
        self.kubeconfig.chmod(0o600)

    def _args(self, name: str) -> list[str]:
        layout = flags.Layout(
            binary_dir=self.options.binary_dir,
            state_dir=self.state_dir,
            pki_dir=self.pki_dir,
            kubeconfig=self.kubeconfig,
            ports=self.ports,
            address=self.options.address,
        )
        audit = (
            f"--audit-policy-file={self._audit_policy}",
            f"--audit-log-path={self.audit_log}",
            "--audit-log-format=json",
        )
        return flags.command(name, layout, apiserver_args=(*audit, *self.options.apiserver_args))

    def _start(self, name: str) -> None:
        state = self._require_state()
        state.pids[name] = process.spawn(
            self._args(name), log_file=self._log(name), tie_to_parent=self.options.tie_to_parent
        )
        state.save(self._state_file)

    def _wait_healthy(self, name: str) -> None:
        ports = self.ports

        def ready() -> bool:
            if name == "etcd":
                return process.port_is_listening(ports["etcd"])
            if name == "kube-apiserver":
                return self.rest.raw("GET", "/readyz")[0] == 200
            # Controller-manager and scheduler serve /healthz over TLS with their own self-signed cert.
            return process.port_is_listening(ports[name])

        process.wait_until(
            ready, timeout=self.options.start_timeout, what=f"{name} to become healthy", alive=self.check
        )

    def _create_nodes(self) -> None:
        for index in range(self.options.nodes):
            name = f"kwok-node-{index}"
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {flags.KWOK_NODE_ANNOTATION: "fake"},
                    "labels": {
                        "kubernetes.io/hostname": name,
                        "kubernetes.io/os": "linux",
                        "kubernetes.io/arch": "amd64",
                        "type": "kwok",
                    },
                },
                "status": {
                    "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                    "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                },
            }
            self.rest.request("POST", "/api/v1/nodes", node)

    def _nodes_ready(self) -> bool:
        nodes = self.rest.request("GET", "/api/v1/nodes")["items"]
        ready = [n for n in nodes if _condition_true(n, "Ready")]
        return len(ready) >= self.options.nodes


def _condition_true(obj: dict[str, Any], condition: str) -> bool:
    conditions = obj.get("status", {}).get("conditions", [])
    return any(c["type"] == condition and c["status"] == "True" for c in conditions)
