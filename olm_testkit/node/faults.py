"""Network faults made inside a real node's network namespace, outside the code under test: the
kernel drops the packets (iptables), and conntrack says which connections are still open.

Pod traffic, bridged to a Pod on the same node or routed to another node, passes the namespace's
FORWARD chain (bridge netfilter is on), so a rule there cuts a Pod off from chosen addresses,
established connections included, while the node itself (kubelet probes) is untouched.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Sequence

from olm_runtime.testing.process import ComponentFailure
from olm_testkit.nodenet import NodeNetwork


@contextlib.contextmanager
def partitioned(network: NodeNetwork, *, source: str, destinations: Sequence[str]) -> Iterator[None]:
    """Every packet between the Pod address `source` and each of `destinations`, both ways,
    dropped inside the node until the block ends: no answer, no reset, no FIN, as a partition
    looks to both ends."""
    rules = [
        ("FORWARD", ["-s", f"{a}/32", "-d", f"{b}/32"])
        for destination in destinations
        for a, b in ((source, destination), (destination, source))
    ]
    with _dropped(network, rules):
        yield


@contextlib.contextmanager
def cut_off(network: NodeNetwork, *, address: str, port: int) -> Iterator[None]:
    """The whole node cut off from the TCP service at `address:port` (the API server), both ways,
    for its own processes (the kubelet, kube-proxy, CoreDNS) and its Pods alike, until the block
    ends. Other services of the same address (the registry beside the API server) stay reachable."""
    to = ["-d", f"{address}/32", "-p", "tcp", "--dport", str(port)]
    back = ["-s", f"{address}/32", "-p", "tcp", "--sport", str(port)]
    with _dropped(network, [("OUTPUT", to), ("FORWARD", to), ("INPUT", back), ("FORWARD", back)]):
        yield


@contextlib.contextmanager
def _dropped(network: NodeNetwork, rules: Sequence[tuple[str, list[str]]]) -> Iterator[None]:
    inserted: list[tuple[str, list[str]]] = []
    try:
        for chain, match in rules:
            # First in the chain: before kube-proxy's rule that accepts established connections.
            _run(network.enter(["iptables", "-I", chain, "1", *match, "-j", "DROP"]))
            inserted.append((chain, match))
        yield
    finally:
        for chain, match in inserted:
            _run(network.enter(["iptables", "-D", chain, *match, "-j", "DROP"]))


def established(network: NodeNetwork, *, source: str, destinations: Sequence[str]) -> int:
    """How many TCP connections from `source` to any of `destinations` the node's conntrack holds
    as established: a client's idle pooled connections included, until it closes them."""
    out = _run(network.enter(["conntrack", "-L", "-p", "tcp", "--state", "ESTABLISHED", "-s", source]))
    return sum(1 for line in out.splitlines() if _peer(line) in destinations)


def _peer(entry: str) -> str:
    """The address that answers a conntrack entry's connection: the reply direction's source,
    which is the Pod behind a Service after kube-proxy's DNAT (the original `dst=` is the
    Service's cluster IP)."""
    sources = [field.removeprefix("src=") for field in entry.split() if field.startswith("src=")]
    return sources[1] if len(sources) > 1 else ""


def _run(args: list[str]) -> str:
    result = subprocess.run(args, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise ComponentFailure(f"`{' '.join(args)}` failed: {result.stderr.strip()}")
    return result.stdout
