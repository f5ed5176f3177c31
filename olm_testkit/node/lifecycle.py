"""`RealNode`: start (or reuse) a real node, check it, stop it and remove what it made.

`up()` writes every component's configuration (`credentials`, `containerd`, `cni`, `kubelet`,
`kubeproxy`, `coredns`), makes the node's cgroup, starts containerd, imports the sandbox image,
starts the kubelet, kube-proxy and CoreDNS inside the node's network namespace, and returns once the
Node is Ready, CoreDNS answers for `kubernetes.default.svc` and kube-proxy wrote that Service's
rules. The pids are recorded in the state directory (and with the node network's marker), so
`down()` from another process, or the next `up()` after a crash, finds them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from olm_runtime.testing import process
from olm_runtime.testing._rest import RESTClient
from olm_runtime.testing.pki import CertificateAuthority
from olm_testkit import nodenet
from olm_testkit.node import cgroups, cni, containerd, coredns, credentials, kubelet, kubeproxy, sandbox
from olm_testkit.node.cleanup import cleanup
from olm_testkit.node.layout import NodeLayout
from olm_testkit.node.prerequisites import check_prerequisites

COMPONENTS = ("containerd", "kubelet", "kube-proxy", "coredns")


@dataclass(frozen=True, kw_only=True)
class NodeOptions:
    binary_dir: Path
    """Directory with `kubelet`, `kube-proxy`, `coredns` and `pause` (built by hack.controlplane)."""
    state_dir: Path
    """Configuration, certificates, containerd's store, the kubelet's root, logs and pids."""
    network: nodenet.NodeNetwork
    """The node's network namespace and addresses (created before the API server starts)."""
    owner: Path
    """The cluster's state directory, recorded with the network (`nodenet.allocate`)."""
    kubeconfig: Path
    """An admin kubeconfig of the control plane (CoreDNS reads Services and Pods with it)."""
    server: str
    """The API server's URL as the node reaches it (the host end of the node network)."""
    ca: CertificateAuthority
    """The control plane's CA: issues the node's certificates, and containerd trusts it (beside the
    system's CAs) for every registry, so images pull from a registry whose certificate it issued."""
    mirror: str | None = None
    """`host:port` of a registry that mirrors Docker Hub for the node's containerd: Pods that name
    public images (`busybox:1.35`) pull them from there (`containerd.mirror_hosts`)."""
    tie_to_parent: bool = False
    """Stop the node's processes when the process that started them exits (test sessions)."""
    start_timeout: float = 120.0


class RealNode:
    def __init__(self, options: NodeOptions) -> None:
        self.options = options
        self.network = options.network
        self.state_dir = options.state_dir
        self.layout = NodeLayout(options.state_dir, options.network)
        self.up_seconds: float | None = None
        """How long the last `up()` took (for figures)."""
        self._pids: dict[str, int] = {}

    @property
    def name(self) -> str:
        return self.layout.name

    @property
    def logs_dir(self) -> Path:
        return self.layout.logs_dir

    @property
    def containerd_socket(self) -> Path:
        return self.layout.containerd_socket

    @property
    def cgroup_parent(self) -> str:
        """The cgroup (in every v1 hierarchy) that holds every Pod of this node."""
        return self.layout.cgroup_parent

    def log_file(self, component: str) -> Path:
        return self.layout.log_file(component)

    def ctr(self, *args: str) -> list[str]:
        """A `ctr` command line against this node's containerd, in the Kubernetes namespace."""
        return containerd.ctr(self.layout, *args)

    # Lifecycle -------------------------------------------------------------------------------

    def up(self) -> float:
        """Start (or reuse) the node; return the seconds until it was Ready with DNS answering."""
        started = time.monotonic()
        binaries = self.options.binary_dir
        check_prerequisites(binaries)
        if self._reuse():
            self.up_seconds = time.monotonic() - started
            return self.up_seconds
        # The network stays: the API server and registry listen on it (its owner deletes it).
        cleanup(self.state_dir, self.network, keep_network=True)
        # A Node object left by an earlier run may still say Ready: readiness must be this run's.
        self._delete_node_object()
        if not self.network.exists():
            self.network.create()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(exist_ok=True)
        self._write_configuration()
        cgroups.make(self.cgroup_parent)
        self._start("containerd", containerd.args(self.layout), env=containerd.environment(self.layout))
        process.wait_until(
            lambda: containerd.answers(self.layout), timeout=30, what="containerd to answer", alive=self.check
        )
        sandbox.write_pause_archive(binaries / "pause", self.layout.sandbox_archive)
        containerd.import_archive(self.layout, self.layout.sandbox_archive)
        self._start("kubelet", kubelet.args(self.layout, binaries))
        self._start("kube-proxy", kubeproxy.args(self.layout, binaries))
        self._start("coredns", coredns.args(self.layout, binaries))
        self._wait(self._node_ready, f"node {self.name} to become Ready")
        self._wait(
            lambda: (
                coredns.resolve(self.network.node_ip, f"kubernetes.default.svc.{coredns.CLUSTER_DOMAIN}")
                == self._kubernetes_service_ip()
            ),
            "CoreDNS to answer for kubernetes.default.svc",
        )
        self._wait(
            lambda: kubeproxy.service_rules_written(self.network),
            "kube-proxy to write the rules of the kubernetes Service",
        )
        self.up_seconds = time.monotonic() - started
        return self.up_seconds

    def down(self) -> None:
        """Stop the node and remove everything it made (see `cleanup`)."""
        self._pids = self._load()
        for name in ("kubelet", "kube-proxy", "coredns"):
            if name in self._pids:
                process.stop(self._pids.pop(name))
        cleanup(self.state_dir, self.network, keep_network=True)
        self._delete_node_object()
        self._pids = {}
        self.layout.state_file.unlink(missing_ok=True)

    def check(self) -> None:
        """Raise ComponentFailure naming every node process that has died, with its log's tail."""
        dead = [name for name, pid in self._pids.items() if not process.is_alive(pid)]
        if dead:
            details = "\n".join(
                f"--- {n} ({self.log_file(n)}):\n{process.log_tail(self.log_file(n))}" for n in dead
            )
            raise process.ComponentFailure(f"real node process(es) died: {', '.join(dead)}\n{details}")

    @contextlib.contextmanager
    def stopped(self, component: str) -> Iterator[None]:
        """`component` (`kubelet`, `coredns` or `kube-proxy`) killed until the block ends, then
        started again as `up()` starts it: a node whose kubelet, DNS server or Service proxy died
        (its containers keep running). Call it from the thread that lives as long as the node
        (`tie_to_parent`)."""
        restart = {
            "kubelet": kubelet.args(self.layout, self.options.binary_dir),
            "coredns": coredns.args(self.layout, self.options.binary_dir),
            "kube-proxy": kubeproxy.args(self.layout, self.options.binary_dir),
        }
        if component not in restart:
            raise ValueError(f"{component!r} cannot be stopped alone: one of {sorted(restart)}")
        process.stop(self._pids.pop(component), timeout=0)
        self._save()
        try:
            yield
        finally:
            self._start(component, restart[component])

    # Containers ------------------------------------------------------------------------------

    def container_pids(self, container_id: str) -> list[int]:
        """The processes of one container (its cgroup's), for signalling or measuring it."""
        return cgroups.container_pids(self.cgroup_parent, container_id)

    def container_memory(self, container_id: str) -> int:
        """Resident memory of one container: the sum over its processes."""
        return sum(process.rss_bytes(pid) for pid in self.container_pids(container_id))

    def kill_container(self, container_id: str, sig: int = signal.SIGKILL) -> None:
        """Signal the main process of a container from outside, as the kernel's OOM killer would."""
        result = subprocess.run(
            self.ctr("tasks", "kill", f"--signal={signal.Signals(sig).name}", container_id),
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise process.ComponentFailure(f"cannot signal container {container_id}: {result.stderr}")

    # Configuration ---------------------------------------------------------------------------

    def _write_configuration(self) -> None:
        layout, options = self.layout, self.options
        issued = credentials.issue(options.ca, layout)
        for path, user, identity in (
            (layout.kubelet_kubeconfig, "kubelet", issued.kubelet),
            (layout.kube_proxy_kubeconfig, "kube-proxy", issued.proxy),
        ):
            credentials.write_kubeconfig(
                path, server=options.server, ca_file=options.ca.cert_file, user=user, identity=identity
            )
        layout.containerd_dir.mkdir(exist_ok=True)
        layout.containerd_config.write_text(containerd.config(layout))
        layout.ca_bundle.write_bytes(containerd.ca_bundle(options.ca.cert_pem))
        layout.registry_hosts_dir.mkdir(exist_ok=True)
        if options.mirror is not None:
            (layout.registry_hosts_dir / "docker.io").mkdir(exist_ok=True)
            (layout.registry_hosts_dir / "docker.io" / "hosts.toml").write_text(
                containerd.mirror_hosts(options.mirror)
            )
        layout.cni_conf_dir.mkdir(exist_ok=True)
        (layout.cni_conf_dir / cni.CONFIG_FILE).write_text(json.dumps(cni.config(self.network), indent=2))
        layout.resolv_conf.write_text("")
        layout.pod_logs_dir.mkdir(exist_ok=True)
        kubelet_config = kubelet.config(
            layout,
            ca_file=options.ca.cert_file,
            serving_cert=issued.serving.cert_file,
            serving_key=issued.serving.key_file,
        )
        layout.kubelet_config.write_text(yaml.safe_dump(kubelet_config))
        layout.kube_proxy_config.write_text(yaml.safe_dump(kubeproxy.config(layout)))
        layout.corefile.write_text(coredns.corefile(layout, kubeconfig=options.kubeconfig))

    # Processes -------------------------------------------------------------------------------

    def _start(self, name: str, args: list[str], env: dict[str, str] | None = None) -> None:
        self._pids[name] = process.spawn(
            self.network.enter(args),
            log_file=self.log_file(name),
            tie_to_parent=self.options.tie_to_parent,
            env={**os.environ, **env} if env else None,
        )
        self._save()

    def _wait(self, condition: Callable[[], bool], what: str) -> None:
        process.wait_until(
            condition, timeout=self.options.start_timeout, what=what, alive=self.check, interval=0.5
        )

    def _save(self) -> None:
        self.layout.state_file.write_text(json.dumps({"pids": self._pids, "index": self.network.index}))
        nodenet.record(self.network, self.options.owner, pids=[*self._pids.values(), os.getpid()])

    def _load(self) -> dict[str, int]:
        try:
            return {k: int(v) for k, v in json.loads(self.layout.state_file.read_text())["pids"].items()}
        except (FileNotFoundError, KeyError, ValueError):
            return {}

    def _reuse(self) -> bool:
        pids = self._load()
        if set(pids) != set(COMPONENTS) or not all(process.is_alive(p) for p in pids.values()):
            return False
        self._pids = pids
        try:
            return self._node_ready()
        except OSError:
            return False

    # The API server --------------------------------------------------------------------------

    def _rest(self) -> RESTClient:
        return RESTClient(
            server=self.options.server,
            ca_file=self.options.ca.cert_file,
            cert_file=self.options.ca.directory / "admin.crt",
            key_file=self.options.ca.directory / "admin.key",
        )

    def _node_ready(self) -> bool:
        node = self._rest().request("GET", f"/api/v1/nodes/{self.name}")
        conditions = (node.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    def _kubernetes_service_ip(self) -> str:
        return str(
            self._rest().request("GET", "/api/v1/namespaces/default/services/kubernetes")["spec"]["clusterIP"]
        )

    def _delete_node_object(self) -> None:
        with contextlib.suppress(Exception):
            self._rest().raw("DELETE", f"/api/v1/nodes/{self.name}")
