"""Network faults made inside a real node's network namespace, outside the code under test: the
kernel drops the packets (iptables), and conntrack says which connections are still open.

Pod traffic, bridged to a Pod on the same node or routed to another node, passes the namespace's
FORWARD chain (bridge netfilter is on), so a rule there cuts a Pod off from chosen addresses,
established connections included, while the node itself (kubelet probes) is untouched.
"""

from __future__ import annotations

import contextlib
import ipaddress
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from olm_runtime.testing.process import ComponentFailure
from olm_testkit.nodenet import NodeNetwork

_DROP = ("-j", "DROP")


@contextlib.contextmanager
def partitioned(network: NodeNetwork, *, source: str, destinations: Sequence[str]) -> Iterator[None]:
    """Every packet between the Pod address `source` and each of `destinations`, both ways,
    dropped inside the node until the block ends: no answer, no reset, no FIN, as a partition
    looks to both ends."""
    rules = [
        ("filter", "FORWARD", ["-s", f"{a}/32", "-d", f"{b}/32", *_DROP])
        for destination in destinations
        for a, b in ((source, destination), (destination, source))
    ]
    with _inserted(network, rules):
        yield


@contextlib.contextmanager
def cut_off(network: NodeNetwork, *, address: str, port: int) -> Iterator[None]:
    """The whole node cut off from the TCP service at `address:port` (the API server), both ways,
    for its own processes (the kubelet, kube-proxy, CoreDNS) and its Pods alike, until the block
    ends. Other services of the same address (the registry beside the API server) stay reachable."""
    to = ["-d", f"{address}/32", "-p", "tcp", "--dport", str(port), *_DROP]
    back = ["-s", f"{address}/32", "-p", "tcp", "--sport", str(port), *_DROP]
    chains = (("OUTPUT", to), ("FORWARD", to), ("INPUT", back), ("FORWARD", back))
    with _inserted(network, [("filter", chain, rule) for chain, rule in chains]):
        yield


@dataclass(frozen=True, kw_only=True)
class Steer:
    """New connections from `sources` (a CIDR) to `destination:port` go to `proxy` instead."""

    sources: str
    destination: str
    port: int
    proxy: str
    """`host:port` of the proxy (which forwards to the real destination)."""

    def match(self) -> list[str]:
        return ["-s", self.sources, "-d", f"{self.destination}/32", "-p", "tcp", "--dport", str(self.port)]


@contextlib.contextmanager
def steered(network: NodeNetwork, steers: Sequence[Steer], *, loss: float = 0.0) -> Iterator[None]:
    """Pods' new connections steered into proxies (iptables DNAT inside the node, before
    kube-proxy's Service rules, so a Service's cluster IP can be steered too), and with `loss`
    that fraction of their packets to and from the proxies dropped at random (the `statistic`
    match), until the block ends; `counts()` reads what the rules did. Connections open before
    the block keep their way."""
    rules = [
        ("nat", "PREROUTING", [*steer.match(), "-j", "DNAT", "--to-destination", steer.proxy])
        for steer in steers
    ]
    if loss:
        random = ["-m", "statistic", "--mode", "random", "--probability", f"{loss:g}", *_DROP]
        for steer in steers:
            host, _, port = steer.proxy.rpartition(":")
            for match in (
                ["-s", steer.sources, "-d", f"{host}/32", "-p", "tcp", "--dport", port],
                ["-s", f"{host}/32", "-d", steer.sources, "-p", "tcp", "--sport", port],
            ):
                rules.append(("filter", "FORWARD", [*match, *random]))
    with _inserted(network, rules):
        yield


def counts(network: NodeNetwork, steer: Steer) -> tuple[int, int]:
    """(connections steered into `steer.proxy`, packets dropped on their way) so far."""
    steered_ = _counter(network, "nat", "PREROUTING", f"to:{steer.proxy}")
    port = steer.proxy.rpartition(":")[2]
    dropped = _counter(network, "filter", "FORWARD", "statistic", f"dpt:{port}") + _counter(
        network, "filter", "FORWARD", "statistic", f"spt:{port}"
    )
    return steered_, dropped


def _counter(network: NodeNetwork, table: str, chain: str, *words: str) -> int:
    """The packet count of the rules of `chain` whose listing holds every one of `words`."""
    out = _run(network.enter(["iptables", "-t", table, "-L", chain, "-n", "-v", "-x"]))
    return sum(int(line.split()[0]) for line in out.splitlines()[2:] if all(w in line for w in words))


@contextlib.contextmanager
def _inserted(network: NodeNetwork, rules: Sequence[tuple[str, str, list[str]]]) -> Iterator[None]:
    """Each `(table, chain, rule)` inserted inside the node until the block ends, first in its
    chain: before kube-proxy's rules (its Service DNAT, its accept of established connections)."""
    inserted: list[tuple[str, str, list[str]]] = []
    try:
        for table, chain, rule in rules:
            _run(network.enter(["iptables", "-t", table, "-I", chain, "1", *rule]))
            inserted.append((table, chain, rule))
        yield
    finally:
        for table, chain, rule in inserted:
            _run(network.enter(["iptables", "-t", table, "-D", chain, *rule]))


def established(
    network: NodeNetwork, *, peers: Sequence[str], source: str | None = None, port: int | None = None
) -> int:
    """How many TCP connections the node's conntrack holds as established whose answering end is
    one of `peers` (on `port`, if given), from `source` (any Pod, if not): a client's idle pooled
    connections included, until it closes them."""
    command = ["conntrack", "-L", "-p", "tcp", "--state", "ESTABLISHED", *(["-s", source] if source else [])]
    answering = [_peer(line) for line in _run(network.enter(command)).splitlines()]
    return sum(1 for address, sport in answering if address in peers and (port is None or sport == str(port)))


_TCP_ESTABLISHED = "01"


def connections_of(pid: int, *, peers: Sequence[str], port: int | None = None) -> int:
    """How many TCP connections the network namespace of process `pid` (a container's: the Pod's)
    holds established to one of `peers` (on `port`, if given), from its own socket table. Unlike
    conntrack's view, which keeps an entry of a connection closed while a partition dropped its
    FIN for as long as TCP's established timeout, this counts only sockets that are open. A Pod
    reaching a Service sees the Service's cluster IP as its peer: the DNAT happens outside it."""
    wanted = {ipaddress.ip_address(peer) for peer in peers}
    found = 0
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if len(fields) < 4 or fields[3] != _TCP_ESTABLISHED:
                continue
            address, remote_port = _proc_address(fields[2])
            if address in wanted and (port is None or remote_port == port):
                found += 1
    return found


def _proc_address(text: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """An address of `/proc/net/tcp{,6}`: hex, each 32-bit word in host (little-endian) order."""
    host, _, port = text.partition(":")
    raw = bytes.fromhex(host)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(words)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address, int(port, 16)


def _peer(entry: str) -> tuple[str, str]:
    """The address and port that answer a conntrack entry's connection: the reply direction's
    source, which is the Pod behind a Service after kube-proxy's DNAT (the original `dst=` is the
    Service's cluster IP), or the proxy a connection was steered to."""
    fields = entry.split()
    sources = [f.removeprefix("src=") for f in fields if f.startswith("src=")]
    ports = [f.removeprefix("sport=") for f in fields if f.startswith("sport=")]
    return (sources[1], ports[1]) if len(sources) > 1 and len(ports) > 1 else ("", "")


def _run(args: list[str]) -> str:
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ComponentFailure(f"`{' '.join(args)}` failed: {result.stderr.strip()}")
    return result.stdout
