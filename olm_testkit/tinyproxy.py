"""A real HTTP proxy on loopback for tests: Debian's `tinyproxy`, one instance per test.

Each instance has its own configuration, log and free port, and runs in the foreground as a child
of the test (the Debian package's system service, where one runs, is neither used nor touched).
What it did is read back from its log: `requested(target)` counts the `CONNECT`s it was asked for,
`relayed(host)` the connections it opened to `host` on a client's behalf. `refusing=True` allows
`CONNECT` to no port a test uses, so every tunnel is answered `403 Access violation`.
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


@dataclass
class Tinyproxy:
    workdir: Path
    refusing: bool = False
    """Answer every `CONNECT` with 403 (`ConnectPort 1`: only port 1 may be tunnelled to)."""
    port: int = 0
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`, the value of `HTTPS_PROXY` that names it."""
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
        """Launch it; returns at once (`wait_listening` waits for its port)."""
        binary = shutil.which(BINARY)
        if binary is None:
            raise AssertionError("tinyproxy is not installed: run hack/install-deps.sh")
        self.workdir.mkdir(parents=True, exist_ok=True)
        (self.port,) = free_ports(1)
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
        self.process = subprocess.Popen(
            [binary, "-d", "-c", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    async def wait_listening(self) -> None:
        async def listening() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise AssertionError(f"tinyproxy exited with {self.process.returncode}:\n{self.log()}")
            with contextlib.closing(socket.socket()) as probe:
                return probe.connect_ex(("127.0.0.1", self.port)) == 0

        await eventually(listening, what="tinyproxy to listen", timeout=15)

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.asynccontextmanager
async def running(workdir: Path, *, refusing: bool = False) -> AsyncIterator[Tinyproxy]:
    """A started proxy, stopped after the block."""
    proxy = Tinyproxy(workdir, refusing=refusing)
    proxy.start()
    try:
        await proxy.wait_listening()
        yield proxy
    finally:
        proxy.stop()
