"""A real HTTP proxy on loopback for tests: Debian's `tinyproxy`, one instance per test.

Each instance has its own configuration, log and free port, and runs in the foreground as a child
of the test (the Debian package's system service, where one runs, is neither used nor touched).
What it did is read back from its log: `requested(target)` counts the `CONNECT`s it was asked for,
`relayed(host)` the connections it opened to `host` on a client's behalf. `refusing=True` allows
`CONNECT` to no port a test uses, so every tunnel is answered `403 Access violation`.

With `tls` (a certificate and key) the proxy is an `https://` one: Debian's `stunnel` terminates
TLS in front of it, and `url` names that port, so clients speak TLS to the proxy and, inside that,
TLS to the server (TLS in TLS).
"""

from __future__ import annotations

import contextlib
import re
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports

BINARY = "tinyproxy"
TLS_BINARY = "stunnel"


@dataclass
class Tinyproxy:
    workdir: Path
    refusing: bool = False
    """Answer every `CONNECT` with 403 (`ConnectPort 1`: only port 1 may be tunnelled to)."""
    tls: tuple[Path, Path] | None = None
    """`(certificate, key)` of an `https://` proxy: stunnel serves them in front of tinyproxy."""
    port: int = 0
    tls_port: int = 0
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` (`https://` with `tls`), the `HTTPS_PROXY` that names it."""
        if self.tls is not None:
            return f"https://127.0.0.1:{self.tls_port}"
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        return self.workdir / "tinyproxy.log"

    def log(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def requested(self, target: str) -> int:
        """`CONNECT <target>` requests received (`target` is `host:port`), refused ones included."""
        return len(re.findall(rf"Request \(file descriptor \d+\): CONNECT {re.escape(target)} ", self.log()))

    def relayed(self, host: str) -> int:
        """Connections opened to `host` for clients: the tunnels and requests it relayed there."""
        return self.log().count(f'Established connection to host "{host}"')

    def start(self) -> None:
        """Launch it (and its TLS front); returns at once (`wait_listening` waits for the ports)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port, self.tls_port = free_ports(2)
        config = self.workdir / "tinyproxy.conf"
        lines = [
            f"Port {self.port}",
            "Listen 127.0.0.1",
            "Timeout 60",
            f'LogFile "{self.log_file}"',
            "LogLevel Connect",
            "MaxClients 64",
            "Allow 127.0.0.1",
            "DisableViaHeader Yes",
            *(["ConnectPort 1"] if self.refusing else []),
        ]
        config.write_text("\n".join(lines) + "\n")
        # -d: stay in the foreground, a child of this test that `stop` ends.
        self._launch(BINARY, "-d", "-c", str(config))
        if self.tls is not None:
            front = self.workdir / "stunnel.conf"
            front.write_text(
                "\n".join(
                    [
                        "foreground = yes",
                        f"output = {self.workdir / 'stunnel.log'}",
                        "[proxy]",
                        f"accept = 127.0.0.1:{self.tls_port}",
                        f"connect = 127.0.0.1:{self.port}",
                        f"cert = {self.tls[0]}",
                        f"key = {self.tls[1]}",
                    ]
                )
                + "\n"
            )
            self._launch(TLS_BINARY, str(front))

    def _launch(self, name: str, *args: str) -> None:
        binary = shutil.which(name)
        if binary is None:
            raise AssertionError(f"{name} is not installed: run hack/install-deps.sh")
        self.processes.append(
            subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )

    async def wait_listening(self) -> None:
        ports = [self.port, *([self.tls_port] if self.tls is not None else [])]

        async def listening() -> bool:
            for process in self.processes:
                if process.poll() is not None:
                    raise AssertionError(f"{process.args!r} exited with {process.returncode}:\n{self.log()}")
            for port in ports:
                with contextlib.closing(socket.socket()) as probe:
                    if probe.connect_ex(("127.0.0.1", port)) != 0:
                        return False
            return True

        await eventually(listening, what="the proxy to listen", timeout=15)

    def stop(self) -> None:
        processes, self.processes = self.processes, []
        for process in reversed(processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


@contextlib.asynccontextmanager
async def running(
    workdir: Path, *, refusing: bool = False, tls: tuple[Path, Path] | None = None
) -> AsyncIterator[Tinyproxy]:
    """A started proxy, stopped after the block."""
    proxy = Tinyproxy(workdir, refusing=refusing, tls=tls)
    proxy.start()
    try:
        await proxy.wait_listening()
        yield proxy
    finally:
        proxy.stop()
