"""A real node beside the kwok nodes: kubelet, containerd with runc, a CNI bridge, kube-proxy
(iptables mode) and CoreDNS as the cluster DNS, inside a network namespace of its own
(`nodenet.NodeNetwork`).

Pods on it really run: images are pulled by containerd (from the registry on the host end of the
node network, trusted through the CA given), Services work through kube-proxy's rules, names resolve through
CoreDNS, and the `kubernetes` Service leads to the API server on the host end of the node network.
The node registers with a NoSchedule taint (`TAINT_KEY`) and the label `NODE_LABEL=real`, so only
Pods that ask for it land here; `placement_annotations()` makes a whole namespace ask (through the
PodNodeSelector and PodTolerationRestriction admission plugins the control plane enables).

What this kind of VM needs, learnt the hard way: cgroups v1 (`failCgroupV1: false`), containerd's
`restrict_oom_score_adj` (root may not lower oom_score_adj here), a sandbox image built locally
(the pause program from `hack/controlplane/gomod/pause`), and an explicit node IP.

`down()` leaves nothing behind: containers are killed through their cgroups, the shims and
containerd stopped, mounts under the state directory and the Pods' network namespaces removed,
the node's cgroups deleted, and the node network (with every iptables rule kube-proxy wrote)
deleted. A node whose owner died is cleaned the same way by the next `up()`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import ipaddress
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from olm_runtime.testing import nodenet, process
from olm_runtime.testing._rest import RESTClient
from olm_runtime.testing.pki import CertificateAuthority

NODE_LABEL = "olm-py.dev/node"
TAINT_KEY = "olm-py.dev/real-node"
SANDBOX_IMAGE = "olm-py.local/pause:3.10"
CLUSTER_DOMAIN = "cluster.local"
CGROUP_ROOT = Path("/sys/fs/cgroup")
COMPONENTS = ("containerd", "kubelet", "kube-proxy", "coredns")
BINARIES = ("kubelet", "kube-proxy", "coredns", "pause")
NODE_PROGRAMS = frozenset({"containerd", "containerd-shim-runc-v2", "kubelet", "kube-proxy", "coredns"})

# The Debian packages a real node needs beyond the node network's, by the command they ship.
REQUIRED_TOOLS = {
    "containerd": "containerd",
    "ctr": "containerd",
    "runc": "runc",
    "conntrack": "conntrack",
}
CNI_BIN_DIR = Path("/usr/lib/cni")


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
    tie_to_parent: bool = False
    """Stop the node's processes when the process that started them exits (test sessions)."""
    start_timeout: float = 120.0


class RealNode:
    def __init__(self, options: NodeOptions) -> None:
        self.options = options
        self.network = options.network
        self.state_dir = options.state_dir
        self._pids: dict[str, int] = {}

    # Names and paths -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return f"real-node-{self.network.index}"

    @property
    def logs_dir(self) -> Path:
        return self.state_dir / "logs"

    @property
    def containerd_socket(self) -> Path:
        return self.state_dir / "containerd" / "containerd.sock"

    @property
    def cgroup_parent(self) -> str:
        """The cgroup (in every v1 hierarchy) that holds every Pod of this node."""
        return f"olm-node-{self.network.index}"

    @property
    def pod_logs_dir(self) -> Path:
        return self.state_dir / "pod-logs"

    @property
    def _state_file(self) -> Path:
        return self.state_dir / "state.json"

    def log_file(self, component: str) -> Path:
        return self.logs_dir / f"{component}.log"

    def ctr(self, *args: str) -> list[str]:
        """A `ctr` command line against this node's containerd, in the Kubernetes namespace."""
        return ["ctr", f"--address={self.containerd_socket}", "--namespace=k8s.io", *args]

    # Lifecycle -------------------------------------------------------------------------------

    def up(self) -> float:
        """Start (or reuse) the node; return the seconds until it was Ready with DNS answering."""
        started = time.monotonic()
        check_prerequisites(self.options.binary_dir)
        if self._reuse():
            return time.monotonic() - started
        # The network stays: the API server and registry listen on it (its owner deletes it).
        cleanup(self.state_dir, self.network, keep_network=True)
        # A Node object left by an earlier run may still say Ready: readiness must be this run's.
        self._delete_node_object()
        if not self.network.exists():
            self.network.create()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.logs_dir.mkdir(exist_ok=True)
        self._write_configuration()
        self._make_cgroups()
        self._start(
            "containerd",
            self._containerd_args(),
            env={**os.environ, "SSL_CERT_FILE": str(self.state_dir / "containerd" / "ca-bundle.crt")},
        )
        process.wait_until(self._containerd_ready, timeout=30, what="containerd to answer", alive=self.check)
        self._import_sandbox_image()
        self._start("kubelet", self._kubelet_args())
        self._start("kube-proxy", self._kube_proxy_args())
        self._start("coredns", [str(self.options.binary_dir / "coredns"), "-conf", str(self._corefile)])
        process.wait_until(
            self._node_ready,
            timeout=self.options.start_timeout,
            what=f"node {self.name} to become Ready",
            alive=self.check,
            interval=0.5,
        )
        process.wait_until(
            lambda: (
                resolve(self.network.node_ip, f"kubernetes.default.svc.{CLUSTER_DOMAIN}")
                == self._kubernetes_service_ip()
            ),
            timeout=self.options.start_timeout,
            what="CoreDNS to answer for kubernetes.default.svc",
            alive=self.check,
            interval=0.5,
        )
        process.wait_until(
            self._service_rules_written,
            timeout=self.options.start_timeout,
            what="kube-proxy to write the rules of the kubernetes Service",
            alive=self.check,
            interval=0.5,
        )
        return time.monotonic() - started

    def down(self) -> None:
        """Stop the node and remove everything it made (see the module docstring)."""
        self._pids = self._load()
        for name in ("kubelet", "kube-proxy", "coredns"):
            if name in self._pids:
                process.stop(self._pids.pop(name))
        cleanup(self.state_dir, self.network, keep_network=True)
        self._delete_node_object()
        self._pids = {}
        self._state_file.unlink(missing_ok=True)

    def check(self) -> None:
        """Raise ComponentFailure naming every node process that has died, with its log's tail."""
        dead = [name for name, pid in self._pids.items() if not process.is_alive(pid)]
        if dead:
            details = "\n".join(
                f"--- {n} ({self.log_file(n)}):\n{process.log_tail(self.log_file(n))}" for n in dead
            )
            raise process.ComponentFailure(f"real node process(es) died: {', '.join(dead)}\n{details}")

    def container_pids(self, container_id: str) -> list[int]:
        """The processes of one container (its cgroup's), for signalling or measuring it."""
        for path in (CGROUP_ROOT / "memory" / self.cgroup_parent).rglob("cgroup.procs"):
            if container_id in path.parent.name:
                return [int(pid) for pid in path.read_text().split()]
        return []

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

    @property
    def _corefile(self) -> Path:
        return self.state_dir / "Corefile"

    def _issue(self) -> dict[str, Path]:
        ca, name, ip = self.options.ca, self.name, self.network.node_ip
        kubelet = ca.issue(
            f"{name}-kubelet", common_name=f"system:node:{name}", organizations=["system:nodes"], client=True
        )
        serving = ca.issue(f"{name}-kubelet-serving", common_name=name, hosts=[ip, name])
        proxy = ca.issue(f"{name}-kube-proxy", common_name="system:kube-proxy", client=True)
        return {
            "kubelet.crt": kubelet.cert_file,
            "kubelet.key": kubelet.key_file,
            "serving.crt": serving.cert_file,
            "serving.key": serving.key_file,
            "proxy.crt": proxy.cert_file,
            "proxy.key": proxy.key_file,
        }

    def _kubeconfig(self, path: Path, user: str, cert: Path, key: Path) -> Path:
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "local",
                    "cluster": {
                        "server": self.options.server,
                        "certificate-authority": str(self.options.ca.cert_file),
                    },
                }
            ],
            "users": [{"name": user, "user": {"client-certificate": str(cert), "client-key": str(key)}}],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": user}}],
            "current-context": "local",
        }
        path.write_text(json.dumps(config, indent=2))
        path.chmod(0o600)
        return path

    def _write_configuration(self) -> None:
        certs = self._issue()
        state = self.state_dir
        self._kubeconfig(state / "kubelet.kubeconfig", "kubelet", certs["kubelet.crt"], certs["kubelet.key"])
        self._kubeconfig(
            state / "kube-proxy.kubeconfig", "kube-proxy", certs["proxy.crt"], certs["proxy.key"]
        )
        (state / "containerd").mkdir(exist_ok=True)
        (state / "containerd" / "config.toml").write_text(self.containerd_config())
        (state / "net.d").mkdir(exist_ok=True)
        (state / "net.d" / "10-olm.conflist").write_text(json.dumps(self.cni_config(), indent=2))
        # containerd's registry client falls back to the system's trust store on any failure of a
        # per-registry setting (a 404 for a missing tag came back as an x509 error); trusting the
        # CA process-wide gives every pull the same trust.
        system = Path("/etc/ssl/certs/ca-certificates.crt")
        bundle = (system.read_bytes() if system.is_file() else b"") + self.options.ca.cert_pem
        (state / "containerd" / "ca-bundle.crt").write_bytes(bundle)
        # Pods get only the cluster's DNS: nothing of the host's resolver configuration.
        (state / "resolv.conf").write_text("")
        self.pod_logs_dir.mkdir(exist_ok=True)
        (state / "kubelet-config.yaml").write_text(yaml.safe_dump(self.kubelet_config(certs)))
        (state / "kube-proxy.yaml").write_text(yaml.safe_dump(self.kube_proxy_config()))
        self._corefile.write_text(self.corefile())

    def containerd_config(self) -> str:
        state = self.state_dir / "containerd"
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        return "\n".join(
            [
                "version = 2",
                f'root = "{state / "root"}"',
                f'state = "{state / "state"}"',
                "[grpc]",
                f'  address = "{self.containerd_socket}"',
                f"[{cri}]",
                f'  sandbox_image = "{SANDBOX_IMAGE}"',
                # Root may not lower oom_score_adj on this kind of VM: without this every sandbox
                # fails with "can't get final child's PID from pipe".
                "  restrict_oom_score_adj = true",
                f"[{cri}.containerd]",
                '  snapshotter = "overlayfs"',
                '  default_runtime_name = "runc"',
                f"[{cri}.containerd.runtimes.runc]",
                '  runtime_type = "io.containerd.runc.v2"',
                f"[{cri}.containerd.runtimes.runc.options]",
                # runc's state under the node's directory, not the machine-wide /run/containerd/runc.
                f'  Root = "{state / "runc"}"',
                f"[{cri}.cni]",
                f'  bin_dir = "{CNI_BIN_DIR}"',
                f'  conf_dir = "{self.state_dir / "net.d"}"',
                "",
            ]
        )

    def cni_config(self) -> dict[str, Any]:
        # No masquerade: Pod traffic keeps its source address and cannot be routed off the machine.
        return {
            "cniVersion": "0.4.0",
            "name": self.network.netns,
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": self.network.bridge,
                    "isGateway": True,
                    "ipMasq": False,
                    "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "ranges": [[{"subnet": self.network.pod_cidr}]],
                        "routes": [{"dst": "0.0.0.0/0"}],
                    },
                },
                {"type": "portmap", "capabilities": {"portMappings": True}},
            ],
        }

    def kubelet_config(self, certs: dict[str, Path]) -> dict[str, Any]:
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "address": self.network.node_ip,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True},
                "x509": {"clientCAFile": str(self.options.ca.cert_file)},
            },
            "authorization": {"mode": "Webhook"},
            "tlsCertFile": str(certs["serving.crt"]),
            "tlsPrivateKeyFile": str(certs["serving.key"]),
            "cgroupDriver": "cgroupfs",
            "cgroupRoot": f"/{self.cgroup_parent}",
            "failCgroupV1": False,
            "failSwapOn": False,
            "containerRuntimeEndpoint": f"unix://{self.containerd_socket}",
            "clusterDNS": [self.network.node_ip],
            "clusterDomain": CLUSTER_DOMAIN,
            "resolvConf": str(self.state_dir / "resolv.conf"),
            "podLogsDir": str(self.pod_logs_dir),
            "enforceNodeAllocatable": [],
            # A busy test machine must not evict OLM's Pods for disk or memory pressure.
            "evictionHard": {"memory.available": "0%", "nodefs.available": "0%", "imagefs.available": "0%"},
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "serializeImagePulls": False,
            "registerWithTaints": [{"key": TAINT_KEY, "value": "true", "effect": "NoSchedule"}],
            "syncFrequency": "10s",
            "fileCheckFrequency": "0s",
        }

    def kube_proxy_config(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "clientConnection": {"kubeconfig": str(self.state_dir / "kube-proxy.kubeconfig")},
            "mode": "iptables",
            "clusterCIDR": self.network.pod_cidr,
            "hostnameOverride": self.name,
            "bindAddress": self.network.node_ip,
            "healthzBindAddress": "127.0.0.1:10256",
            "metricsBindAddress": "127.0.0.1:10249",
            # Zero leaves the kernel's conntrack settings alone (sysctls this VM may refuse).
            "conntrack": {
                "maxPerCore": 0,
                "min": 0,
                "tcpEstablishedTimeout": "0s",
                "tcpCloseWaitTimeout": "0s",
            },
        }

    def corefile(self) -> str:
        return "\n".join(
            [
                ".:53 {",
                f"    bind {self.network.node_ip}",
                "    errors",
                "    health 127.0.0.1:8080",
                "    ready 127.0.0.1:8181",
                f"    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{",
                f"        kubeconfig {self.options.kubeconfig}",
                "        pods insecure",
                "        fallthrough in-addr.arpa ip6.arpa",
                "    }",
                "    cache 5",
                "}",
                "",
            ]
        )

    # Processes -------------------------------------------------------------------------------

    def _containerd_args(self) -> list[str]:
        return ["containerd", f"--config={self.state_dir / 'containerd' / 'config.toml'}"]

    def _kubelet_args(self) -> list[str]:
        return [
            str(self.options.binary_dir / "kubelet"),
            f"--config={self.state_dir / 'kubelet-config.yaml'}",
            f"--kubeconfig={self.state_dir / 'kubelet.kubeconfig'}",
            f"--hostname-override={self.name}",
            f"--node-ip={self.network.node_ip}",
            f"--root-dir={self.state_dir / 'kubelet'}",
            f"--cert-dir={self.state_dir / 'kubelet' / 'pki'}",
            f"--node-labels={NODE_LABEL}=real",
            "--v=1",
        ]

    def _kube_proxy_args(self) -> list[str]:
        return [str(self.options.binary_dir / "kube-proxy"), f"--config={self.state_dir / 'kube-proxy.yaml'}"]

    def _start(self, name: str, args: list[str], env: dict[str, str] | None = None) -> None:
        self._pids[name] = process.spawn(
            self.network.enter(args),
            log_file=self.log_file(name),
            tie_to_parent=self.options.tie_to_parent,
            env=env,
        )
        self._save()

    def _save(self) -> None:
        self._state_file.write_text(json.dumps({"pids": self._pids, "index": self.network.index}))
        nodenet.record(self.network, self.options.owner, pids=[*self._pids.values(), os.getpid()])

    def _load(self) -> dict[str, int]:
        try:
            return {k: int(v) for k, v in json.loads(self._state_file.read_text())["pids"].items()}
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

    def _containerd_ready(self) -> bool:
        result = subprocess.run(self.ctr("version"), capture_output=True, check=False)
        return result.returncode == 0

    def _import_sandbox_image(self) -> None:
        archive = self.state_dir / "pause.oci.tar"
        write_pause_archive(self.options.binary_dir / "pause", archive)
        result = subprocess.run(
            self.ctr("images", "import", str(archive)), capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise process.ComponentFailure(f"containerd refused the sandbox image: {result.stderr.strip()}")

    def _make_cgroups(self) -> None:
        # The kubelet refuses a cgroup root missing from any hierarchy; a new cpuset cgroup starts
        # with no CPUs or memory nodes, so it gets its parent's.
        for hierarchy in _v1_hierarchies():
            path = hierarchy / self.cgroup_parent
            path.mkdir(exist_ok=True)
            if hierarchy.name == "cpuset":
                for key in ("cpuset.cpus", "cpuset.mems"):
                    (path / key).write_text((hierarchy / key).read_text())

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

    def _service_rules_written(self) -> bool:
        result = subprocess.run(
            self.network.enter(["iptables", "-t", "nat", "-S", "KUBE-SERVICES"]),
            capture_output=True,
            text=True,
            check=False,
        )
        return "default/kubernetes:https" in result.stdout

    def _delete_node_object(self) -> None:
        with contextlib.suppress(Exception):
            self._rest().raw("DELETE", f"/api/v1/nodes/{self.name}")


# Prerequisites -------------------------------------------------------------------------------


def check_prerequisites(binary_dir: Path) -> None:
    """Raise PrerequisiteMissing naming the package, binary or kernel feature this machine lacks."""
    nodenet.check_prerequisites()
    for tool, package in REQUIRED_TOOLS.items():
        if shutil.which(tool) is None:
            raise nodenet.PrerequisiteMissing(
                f"{tool!r} is not installed: install Debian's `{package}` package"
            )
    for plugin in ("bridge", "host-local", "loopback", "portmap"):
        if not (CNI_BIN_DIR / plugin).is_file():
            raise nodenet.PrerequisiteMissing(
                f"the CNI plugin {plugin!r} is missing from {CNI_BIN_DIR}: "
                "install Debian's `containernetworking-plugins` package"
            )
    if "overlay" not in Path("/proc/filesystems").read_text():
        raise nodenet.PrerequisiteMissing(
            "the kernel has no overlay filesystem (containerd's snapshotter needs it): modprobe overlay"
        )
    if not (CGROUP_ROOT / "memory").is_dir():
        raise nodenet.PrerequisiteMissing(
            "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory: this node expects cgroups v1"
        )
    missing = [name for name in BINARIES if not (binary_dir / name).is_file()]
    if missing:
        raise nodenet.PrerequisiteMissing(
            f"missing in {binary_dir}: {', '.join(missing)} (build them with `make cluster-binaries`)"
        )


def _all_hierarchies() -> list[Path]:
    """Every mounted hierarchy, v2's `unified` too: runc creates the node's cgroup there as well."""
    return sorted(path for path in CGROUP_ROOT.iterdir() if (path / "cgroup.procs").exists())


def _v1_hierarchies() -> list[Path]:
    return sorted(
        path
        for path in CGROUP_ROOT.iterdir()
        if path.is_dir() and path.name != "unified" and (path / "cgroup.procs").exists()
    )


# Clean-up ------------------------------------------------------------------------------------


def cleanup(state_dir: Path, network: nodenet.NodeNetwork, *, keep_network: bool = False) -> None:
    """Remove what a node with this state directory and network left: containers, shims,
    containerd, mounts, the Pods' network namespaces, cgroups and (unless `keep_network`, for the
    network's owner to delete once nothing listens on it) the node network."""
    cgroup_parent = f"olm-node-{network.index}"
    # The node's own processes first (their command lines name files of the state directory:
    # kubelet, kube-proxy, CoreDNS, containerd and its shims), so none restarts a container.
    for pid in _node_processes(str(state_dir) + "/"):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    _kill_cgroup_tree(cgroup_parent)
    _unmount_below(state_dir)
    _delete_pod_netns(network)
    network.forget_attachments()
    _remove_cgroup_tree(cgroup_parent)
    for link in Path("/var/log/containers").glob("*.log") if Path("/var/log/containers").is_dir() else ():
        with contextlib.suppress(OSError):
            if str(state_dir) in os.readlink(link):
                link.unlink()
    if not keep_network:
        network.delete()


def _kill_cgroup_tree(cgroup_parent: str) -> None:
    for _ in range(3):
        pids = {
            int(pid)
            for hierarchy in _all_hierarchies()
            for procs in (hierarchy / cgroup_parent).rglob("cgroup.procs")
            for pid in procs.read_text().split()
        }
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)


def _remove_cgroup_tree(cgroup_parent: str) -> None:
    for hierarchy in _all_hierarchies():
        root = hierarchy / cgroup_parent
        if not root.is_dir():
            continue
        for directory in sorted(
            (p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True
        ):
            with contextlib.suppress(OSError):
                directory.rmdir()
        with contextlib.suppress(OSError):
            root.rmdir()


def _node_processes(text: str) -> list[int]:
    """The node's own programs whose command line mentions `text` (never, say, a `tail -f` of a log)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.path.basename(os.readlink(proc / "exe")) not in NODE_PROGRAMS:
                continue
            if text in (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                found.append(int(proc.name))
    return found


def _unmount_below(directory: Path) -> None:
    prefix = str(directory.resolve()) + "/"
    mounts = []
    with contextlib.suppress(FileNotFoundError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            target = line.split()[4].encode().decode("unicode_escape")
            if target.startswith(prefix):
                mounts.append(target)
    for target in sorted(mounts, key=len, reverse=True):
        subprocess.run(["umount", "-l", target], capture_output=True, check=False)


def _delete_pod_netns(network: nodenet.NodeNetwork) -> None:
    pods = ipaddress.ip_network(network.pod_cidr)
    for netns in nodenet.NETNS_DIR.glob("cni-*"):
        result = subprocess.run(
            ["ip", "-n", netns.name, "-j", "addr"], capture_output=True, text=True, check=False
        )
        with contextlib.suppress(ValueError):
            for link in json.loads(result.stdout or "[]"):
                for addr in link.get("addr_info", ()):
                    if addr.get("family") == "inet" and ipaddress.ip_address(addr["local"]) in pods:
                        subprocess.run(
                            ["ip", "netns", "delete", netns.name], capture_output=True, check=False
                        )


# The sandbox image ---------------------------------------------------------------------------


def write_pause_archive(binary: Path, destination: Path) -> None:
    """An OCI archive of one image, `SANDBOX_IMAGE`: the pause program as its only file."""
    layer_buffer = io.BytesIO()
    with tarfile.open(fileobj=layer_buffer, mode="w", format=tarfile.PAX_FORMAT) as layer:
        info = tarfile.TarInfo("pause")
        data = binary.read_bytes()
        info.size, info.mode, info.mtime = len(data), 0o755, 0
        layer.addfile(info, io.BytesIO(data))
    layer_bytes = layer_buffer.getvalue()
    layer_digest = _sha256(layer_bytes)
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Entrypoint": ["/pause"]},
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        }
    ).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": _sha256(config),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest,
                    "size": len(layer_bytes),
                }
            ],
        }
    ).encode()
    index = json.dumps(
        {
            "schemaVersion": 2,
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": _sha256(manifest),
                    "size": len(manifest),
                    "annotations": {
                        "io.containerd.image.name": SANDBOX_IMAGE,
                        "org.opencontainers.image.ref.name": SANDBOX_IMAGE.rpartition(":")[2],
                    },
                }
            ],
        }
    ).encode()
    with tarfile.open(destination, "w") as archive:
        files = {
            "oci-layout": b'{"imageLayoutVersion": "1.0.0"}',
            "index.json": index,
            **{f"blobs/sha256/{_sha256(blob)[7:]}": blob for blob in (layer_bytes, config, manifest)},
        }
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


# DNS -----------------------------------------------------------------------------------------


def resolve(server: str, name: str, *, timeout: float = 1.0) -> str | None:
    """The first A record of `name` from the DNS server at `server:53`, or None."""
    query = struct.pack(">HHHHHH", 0x4F4C, 0x0100, 1, 0, 0, 0)
    query += b"".join(bytes([len(part)]) + part.encode() for part in name.split(".")) + b"\0"
    query += struct.pack(">HH", 1, 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.sendto(query, (server, 53))
            reply, _ = sock.recvfrom(4096)
        except OSError:
            return None
    answers = struct.unpack(">H", reply[6:8])[0]
    offset = len(query)
    for _ in range(answers):
        offset += 2 if reply[offset] & 0xC0 == 0xC0 else reply.index(b"\0", offset) + 1 - offset
        rtype, _, _, length = struct.unpack(">HHIH", reply[offset : offset + 10])
        offset += 10
        if rtype == 1 and length == 4:
            return socket.inet_ntoa(reply[offset : offset + 4])
        offset += length
    return None


def placement_annotations() -> dict[str, str]:
    """Namespace annotations that put every Pod of the namespace on the real nodes."""
    return {
        "scheduler.alpha.kubernetes.io/node-selector": f"{NODE_LABEL}=real",
        "scheduler.alpha.kubernetes.io/defaultTolerations": json.dumps(
            [{"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}]
        ),
    }
