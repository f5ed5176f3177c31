"""CoreDNS, the cluster's DNS, answering for `cluster.local` on the node's address (Pods get only the
cluster's DNS), and `resolve`, a one-question DNS client to wait for it."""

from __future__ import annotations

import socket
import struct
from pathlib import Path

from olm_testkit.node.layout import NodeLayout

CLUSTER_DOMAIN = "cluster.local"


def corefile(layout: NodeLayout, *, kubeconfig: Path) -> str:
    """CoreDNS's configuration: it reads Services and Pods with an admin `kubeconfig`."""
    return "\n".join(
        [
            ".:53 {",
            f"    bind {layout.network.node_ip}",
            "    errors",
            "    health 127.0.0.1:8080",
            "    ready 127.0.0.1:8181",
            f"    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{",
            f"        kubeconfig {kubeconfig}",
            "        pods insecure",
            "        fallthrough in-addr.arpa ip6.arpa",
            "    }",
            "    cache 5",
            "}",
            "",
        ]
    )


def args(layout: NodeLayout, binary_dir: Path) -> list[str]:
    return [str(binary_dir / "coredns"), "-conf", str(layout.corefile)]


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
