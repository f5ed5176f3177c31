"""The network of a real node: a network namespace of its own, joined to this host by a veth pair.

The node's kubelet, containerd, kube-proxy and CoreDNS run inside the namespace (entered with
`nsenter --net`, which keeps the host's mount namespace so the kubelet's volume mounts are seen by
containerd). Pods hang off a bridge inside it. Keeping the node in its own namespace means its
iptables rules (kube-proxy's and ours) stay out of the host's, several nodes can exist at once,
and deleting the namespace removes every interface and rule the node made.

Addresses for node index `k` (0-31):

- `10.87.k.1/24` on the host end of the veth; the first node network of a cluster is where its API
  server and registry listen, so Pods, containerd and the host all reach them at one address;
- `10.87.k.2/24` on the node end: the node's InternalIP (kubelet, kube-proxy, CoreDNS);
- `10.88.k.0/24`: the Pod CIDR, routed by the host through the node end.

The host is the router between nodes, as a top-of-rack switch would be: each namespace routes the
other nodes' links (`10.87.0.0/16`) and Pods (`10.88.0.0/16`) through its host end, and the host
forwards packets that arrive on one node link and leave on another (forwarding is switched on for
the node links only, and a FORWARD rule accepts link-to-link traffic where the host's policy
drops). So a Pod reaches Pods on every node directly, with its own address, as in a real cluster.

Pod traffic never leaves this machine. A namespace has no default route: it reaches only the
cluster's ranges (node links, Pods, Services), and everything else is unreachable; forwarding out
of it is also filtered to Pods and node links (chain OLMPY-FORWARD), and nothing is masqueraded. On
the host, every range the cluster uses (node links, Pod CIDRs, Service cluster IPs, kwok's Pod IPs)
has a blackhole route under the live nodes' more specific ones, so no connection to a cluster
address (the API server calling a webhook of a Pod on a kwok node, or a component while a node
network is being re-created) can leave the machine by the host's default route.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import ipaddress
import json
import os
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from olm_runtime.testing.flags import KWOK_POD_CIDR, SERVICE_CIDR
from olm_runtime.testing.process import ComponentFailure, is_alive

MAX_NODES = 32
NODE_LINKS = "10.87.0.0/16"
POD_CIDRS = "10.88.0.0/16"
# Every range the cluster uses; a more specific route (a live node's /24) wins over the blackhole.
BLACKHOLED = (SERVICE_CIDR, KWOK_POD_CIDR, NODE_LINKS, POD_CIDRS)
NETNS_DIR = Path("/run/netns")
MARKER_DIR = Path("/run/olm-py/nodes")
_FORWARD_CHAIN = "OLMPY-FORWARD"

# The command-line tools the node's network needs, and the Debian package that ships each.
REQUIRED_TOOLS = {
    "ip": "iproute2",
    "nsenter": "util-linux",
    "iptables": "iptables",
    "iptables-restore": "iptables",
}


class PrerequisiteMissing(ComponentFailure):
    """This machine lacks something a real node needs; the message names the package or feature."""


@dataclass(frozen=True, kw_only=True)
class NodeNetwork:
    """The addresses of node `index`; `create()` makes them real, `delete()` removes them."""

    index: int

    @property
    def netns(self) -> str:
        return f"olm-node-{self.index}"

    @property
    def netns_path(self) -> Path:
        return NETNS_DIR / self.netns

    @property
    def host_ip(self) -> str:
        """The host end of the veth (of the first node network: where the API server and the
        registry listen for Pods)."""
        return f"10.87.{self.index}.1"

    @property
    def node_ip(self) -> str:
        """The node's InternalIP."""
        return f"10.87.{self.index}.2"

    @property
    def pod_cidr(self) -> str:
        return f"10.88.{self.index}.0/24"

    @property
    def host_link(self) -> str:
        return f"olmh{self.index}"

    @property
    def bridge(self) -> str:
        """The Pods' bridge inside the namespace (created by the CNI bridge plugin)."""
        return "olm0"

    def enter(self, args: Sequence[str]) -> list[str]:
        """`args` as a command run inside the node's network namespace (and nothing else of it)."""
        return ["nsenter", f"--net={self.netns_path}", "--", *args]

    # Lifecycle -------------------------------------------------------------------------------

    def create(self) -> None:
        """Create the namespace, the veth pair, the routes and the forwarding rules (idempotent)."""
        check_prerequisites()
        self.delete()
        _run(["ip", "netns", "add", self.netns])
        try:
            self._configure()
        except ComponentFailure:
            self.delete()
            raise

    def delete(self) -> None:
        """Remove the namespace (with every interface and rule inside) and the host's route."""
        if self.netns_path.exists():
            _run(["ip", "netns", "delete", self.netns], check=False)
        # The host end of the veth goes with its peer; the route goes with the host end.
        _run(["ip", "link", "delete", self.host_link], check=False)
        _run(["iptables", "-D", "FORWARD", *self._host_forward_rule()], check=False)
        self.forget_attachments()

    def forget_attachments(self) -> None:
        """Forget every Pod attached to this network: the addresses host-local leased and the
        results the CNI plugins cached (`<network>-<sandbox id>-<interface>`; the network is named
        after the namespace). Pods die without a CNI DEL, so a node restarted on a kept network
        would otherwise leak their leases until the Pod range runs out."""
        shutil.rmtree(Path("/var/lib/cni/networks") / self.netns, ignore_errors=True)
        for cached in Path("/var/lib/cni/results").glob(f"{self.netns}-*"):
            cached.unlink(missing_ok=True)

    def exists(self) -> bool:
        return self.netns_path.exists()

    @contextlib.contextmanager
    def link_down(self) -> Iterator[None]:
        """The host end of the veth down until the block ends, as a cable pulled: nothing reaches
        the node or leaves it. Bringing it up restores the host's route to the node's Pods, which
        the kernel removed with the link. Never for the cluster's first network: the API server
        listens on its host end."""
        _run(["ip", "link", "set", self.host_link, "down"])
        try:
            yield
        finally:
            _run(["ip", "link", "set", self.host_link, "up"])
            _run(["ip", "route", "replace", self.pod_cidr, "via", self.node_ip, "dev", self.host_link])

    def _configure(self) -> None:
        # The peer is created in the host's namespace, so it needs a name unique there first.
        peer = f"olmn{self.index}"
        _run(["ip", "link", "add", self.host_link, "type", "veth", "peer", "name", peer])
        _run(["ip", "link", "set", peer, "netns", self.netns])
        inside = "eth0"
        _run(["ip", "-n", self.netns, "link", "set", peer, "name", inside])
        _run(["ip", "addr", "add", f"{self.host_ip}/24", "dev", self.host_link])
        _run(["ip", "link", "set", self.host_link, "up"])
        _run(["ip", "route", "replace", self.pod_cidr, "via", self.node_ip, "dev", self.host_link])
        # Routing between nodes: forwarding is decided by the link a packet arrives on, so switching
        # it on for this link alone leaves every other interface of the host as it was.
        Path(f"/proc/sys/net/ipv4/conf/{self.host_link}/forwarding").write_text("1")
        _run(["iptables", "-I", "FORWARD", "1", *self._host_forward_rule()])
        for cidr in BLACKHOLED:
            _run(["ip", "route", "replace", "blackhole", cidr])
        ns = ["ip", "-n", self.netns]
        _run([*ns, "link", "set", "lo", "up"])
        _run([*ns, "addr", "add", f"{self.node_ip}/24", "dev", inside])
        _run([*ns, "link", "set", inside, "up"])
        # Local processes (the kubelet, containerd) connect to cluster IPs before kube-proxy's OUTPUT
        # rules rewrite them, so that range needs a route; the other nodes and their Pods are
        # reached through the host; nothing else beyond the node is.
        for cidr in (SERVICE_CIDR, NODE_LINKS, POD_CIDRS):
            _run([*ns, "route", "add", cidr, "via", self.host_ip])
        _run([*ns, "route", "add", "unreachable", "default"])
        # Routing between the Pods' bridge and the veth, and Service traffic that hairpins back to
        # a Pod on the same bridge, both need these inside the namespace.
        self._sysctl("net/ipv4/ip_forward", "1")
        self._sysctl("net/bridge/bridge-nf-call-iptables", "1")
        _run(self.enter(["iptables-restore", "--noflush"]), stdin=self.forward_rules())

    def forward_rules(self) -> str:
        """iptables-restore input: forward Pod traffic only to Pods (of any node) and node links."""
        return "\n".join(
            [
                "*filter",
                f":{_FORWARD_CHAIN} - [0:0]",
                f"-I FORWARD 1 -j {_FORWARD_CHAIN}",
                f"-A {_FORWARD_CHAIN} -d {POD_CIDRS} -j RETURN",
                f"-A {_FORWARD_CHAIN} -d {NODE_LINKS} -j RETURN",
                f"-A {_FORWARD_CHAIN} -j DROP",
                "COMMIT",
                "",
            ]
        )

    def _host_forward_rule(self) -> list[str]:
        """The host's FORWARD rule for packets from this node link to another node link."""
        return ["-i", self.host_link, "-o", "olmh+", "-j", "ACCEPT"]

    def _sysctl(self, key: str, value: str) -> None:
        # /proc/sys/net shows the network namespace of the process that reads it.
        _run(self.enter(["sh", "-c", f"echo {value} > /proc/sys/{key}"]))


# Allocation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Allocation:
    network: NodeNetwork
    previous_owner: Path | None
    """The state directory of a dead cluster that held this network: its leftovers go first."""


def allocate(owner: Path, count: int) -> list[Allocation]:
    """`count` node networks for `owner` (a cluster's state directory): those it holds already,
    then the first indices no live node holds, each with the dead owner whose leftovers must be
    cleaned first; in index order, as `held_by` lists them: a cluster's first network is the one
    its control plane listens on.

    A marker file per index (`/run/olm-py/nodes/<k>`) names the state directory that holds it and
    the pids that keep it alive; an index whose pids are all gone is stale and is taken over.
    """
    MARKER_DIR.mkdir(parents=True, exist_ok=True)
    allocated: list[Allocation] = []
    taken: list[NodeNetwork] = []
    with _allocation_lock():
        for index in range(MAX_NODES):
            marker = _read_marker(index)
            if len(allocated) < count and marker is not None and marker.get("owner") == str(owner):
                network = NodeNetwork(index=index)
                record(network, owner, pids=[os.getpid(), *_pids(marker)])
                allocated.append(Allocation(network, None))
        for index in range(MAX_NODES):
            marker = _read_marker(index)
            if len(allocated) < count and (marker is None or not any(is_alive(p) for p in _pids(marker))):
                network = NodeNetwork(index=index)
                record(network, owner, pids=[os.getpid()])
                previous = marker.get("owner") if marker is not None else None
                allocated.append(Allocation(network, Path(str(previous)) if previous else None))
                taken.append(network)
    if len(allocated) < count:
        for network in taken:
            release(network)
        raise ComponentFailure(f"{count} node networks wanted, but running nodes hold all of the {MAX_NODES}")
    return sorted(allocated, key=lambda allocation: allocation.network.index)


def held_by(owner: Path) -> list[NodeNetwork]:
    """The node networks whose markers name `owner` (alive or not)."""
    held = []
    for index in range(MAX_NODES):
        marker = _read_marker(index)
        if marker is not None and marker.get("owner") == str(owner):
            held.append(NodeNetwork(index=index))
    return held


def record(network: NodeNetwork, owner: Path, *, pids: Sequence[int]) -> None:
    """Say which cluster state directory holds `network` and which processes keep it alive."""
    MARKER_DIR.mkdir(parents=True, exist_ok=True)
    marker = MARKER_DIR / str(network.index)
    marker.write_text(json.dumps({"owner": str(owner), "pids": sorted(set(pids))}))


def _pids(marker: dict[str, object]) -> list[int]:
    pids = marker.get("pids")
    return [int(pid) for pid in pids if isinstance(pid, int)] if isinstance(pids, list) else []


def release(network: NodeNetwork) -> None:
    """Forget `network`; the last node network released takes the blackhole routes with it."""
    MARKER_DIR.mkdir(parents=True, exist_ok=True)
    with _allocation_lock():
        (MARKER_DIR / str(network.index)).unlink(missing_ok=True)
        if not any(_read_marker(index) is not None for index in range(MAX_NODES)):
            for cidr in BLACKHOLED:
                _run(["ip", "route", "delete", "blackhole", cidr], check=False)


def _read_marker(index: int) -> dict[str, object] | None:
    try:
        data = json.loads((MARKER_DIR / str(index)).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@contextlib.contextmanager
def _allocation_lock() -> Iterator[None]:
    with (MARKER_DIR / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


# Prerequisites -------------------------------------------------------------------------------


def check_prerequisites() -> None:
    """Raise PrerequisiteMissing naming the first thing this machine lacks for a node network."""
    if os.geteuid() != 0:
        raise PrerequisiteMissing("a real node needs root (network namespaces, bridges, iptables, mounts)")
    for tool, package in REQUIRED_TOOLS.items():
        if shutil.which(tool) is None:
            raise PrerequisiteMissing(f"{tool!r} is not installed: install Debian's `{package}` package")
    overlapping = _overlapping_host_routes()
    if overlapping:
        raise PrerequisiteMissing(
            f"this host routes {', '.join(overlapping)}, which overlaps the local cluster's ranges "
            f"({', '.join(BLACKHOLED)}): a real node here would cut the host off from that network"
        )
    if not Path("/proc/sys/net/bridge").exists():
        raise PrerequisiteMissing(
            "the kernel has no bridge netfilter (/proc/sys/net/bridge is missing): load the "
            "`br_netfilter` module (modprobe br_netfilter)"
        )


def _overlapping_host_routes() -> list[str]:
    """Routes of this host, other than the cluster's own, that overlap a range the cluster uses."""
    ours = [ipaddress.ip_network(cidr) for cidr in BLACKHOLED]
    found = []
    for line in _run(["ip", "-4", "route", "show"]).splitlines():
        fields = line.split()
        if not fields or fields[0] in ("default", "blackhole", "unreachable"):
            continue
        if len(fields) > 2 and fields[1] == "dev" and fields[2].startswith("olmh"):
            continue
        if "via" in fields and fields[fields.index("via") + 1].startswith("10.87."):
            continue
        try:
            destination = ipaddress.ip_network(fields[0], strict=False)
        except ValueError:
            continue
        if any(destination.overlaps(network) for network in ours):
            found.append(str(destination))
    return found


def _run(args: Sequence[str], *, stdin: str | None = None, check: bool = True) -> str:
    try:
        result = subprocess.run(list(args), input=stdin, capture_output=True, text=True, check=False)
    except OSError as err:
        if err.errno == errno.ENOENT:
            raise PrerequisiteMissing(f"{args[0]!r} is not installed") from err
        raise
    if check and result.returncode != 0:
        raise ComponentFailure(f"`{' '.join(args)}` failed: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout
