"""Toxiproxy (Shopify's TCP fault proxy, built by `olm_testkit.binaries`) for the network fault
drills: a server on this host whose proxies forward to a chosen upstream and whose "toxics" slow
the traffic down. The drills steer Pods' connections into a proxy with iptables DNAT inside the
node's network namespace (`olm_testkit.node.faults.steered`), so the code under test still dials
the address it always dials.

The server's HTTP API listens on loopback; each proxy listens where the Pods can reach it (the
host end of the cluster's first node network).
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from olm_runtime.testing import process

BINARY = "toxiproxy-server"


@dataclass
class Toxiproxy:
    binary_dir: Path
    workdir: Path
    port: int = 0
    pid: int | None = field(default=None, repr=False)

    def start(self) -> None:
        (self.port,) = process.free_ports(1)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pid = process.spawn(
            [str(self.binary_dir / BINARY), "-host", "127.0.0.1", "-port", str(self.port)],
            log_file=self.workdir / "toxiproxy.log",
            tie_to_parent=True,
        )
        process.wait_until(self._answers, timeout=30, what="toxiproxy's API to answer")

    def stop(self) -> None:
        if self.pid is not None:
            process.stop(self.pid)
            self.pid = None

    def proxy(self, name: str, *, listen: str, upstream: str) -> None:
        """A proxy `name` accepting on `listen` (`host:port`) and connecting to `upstream`."""
        self._call(
            "POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True}
        )

    def latency(self, proxy: str, milliseconds: int) -> None:
        """Every byte held `milliseconds` in each direction: a round trip costs twice that more."""
        for stream in ("upstream", "downstream"):
            toxic = {
                "name": f"latency-{stream}",
                "type": "latency",
                "stream": stream,
                "toxicity": 1.0,
                "attributes": {"latency": milliseconds, "jitter": 0},
            }
            self._call("POST", f"/proxies/{proxy}/toxics", toxic)

    def remove(self, proxy: str) -> None:
        """Delete the proxy: its listener closes and the connections through it are cut."""
        self._call("DELETE", f"/proxies/{proxy}", None)

    def _answers(self) -> bool:
        try:
            self._call("GET", "/version", None)
        except OSError:
            return False
        return True

    def _call(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = response.read()
        return json.loads(answer) if answer.strip().startswith((b"{", b"[")) else answer.decode()
