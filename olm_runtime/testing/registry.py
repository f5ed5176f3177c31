"""A real OCI registry on loopback: the `distribution` registry (Debian's `docker-registry`) over TLS.

Its serving certificate is issued by the CA it is given (normally the control plane's), so clients
configured with that CA trust both. Storage is a directory; deletes are enabled so tests can
remove images.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from olm_runtime.testing import process
from olm_runtime.testing._rest import RESTClient
from olm_runtime.testing.pki import CertificateAuthority

DEFAULT_BINARY = "docker-registry"


@dataclass(frozen=True, kw_only=True)
class RegistryOptions:
    state_dir: Path
    """Storage, configuration, log and pid of the registry."""
    ca: CertificateAuthority
    """Issues the registry's serving certificate."""
    binary: str = DEFAULT_BINARY
    """The registry executable (looked up on PATH)."""
    tie_to_parent: bool = False
    """Stop the registry when the process that started it exits."""
    start_timeout: float = 30.0
    address: str = "127.0.0.1"
    """The address it listens on, and the host part of image references. Loopback unless real
    nodes pull from it: then the host end of the node network, which Pods and containerd reach."""


class Registry:
    def __init__(self, options: RegistryOptions) -> None:
        self.options = options
        self.state_dir = options.state_dir
        self._port: int | None = None
        self._pid: int | None = None

    @property
    def host(self) -> str:
        """`<address>:<port>`, the registry part of image references."""
        if self._port is None:
            raise RuntimeError("the registry is not up")
        return f"{self.options.address}:{self._port}"

    @property
    def url(self) -> str:
        return f"https://{self.host}"

    @property
    def ca_file(self) -> Path:
        return self.options.ca.cert_file

    @property
    def rest(self) -> RESTClient:
        return RESTClient(server=self.url, ca_file=self.ca_file)

    @property
    def _state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def _config_file(self) -> Path:
        return self.state_dir / "config.yml"

    @property
    def _log(self) -> Path:
        return self.state_dir / "registry.log"

    def up(self) -> float:
        """Start (or reuse) the registry; return the seconds until it answered `/v2/`."""
        started = time.monotonic()
        if self._reuse():
            return time.monotonic() - started
        binary = shutil.which(self.options.binary)
        if binary is None:
            raise process.ComponentFailure(
                f"{self.options.binary!r} is not installed: install Debian's `docker-registry` package"
            )
        if self.state_dir.exists():
            shutil.rmtree(self.state_dir)
        self.state_dir.mkdir(parents=True)
        for _ in range(3):
            (self._port,) = process.free_ports(1)
            pair = self.options.ca.issue(
                "registry",
                common_name="registry",
                hosts=[*dict.fromkeys(["127.0.0.1", self.options.address]), "localhost"],
            )
            config = {
                "version": 0.1,
                "log": {"level": "warn", "accesslog": {"disabled": True}},
                "storage": {
                    "filesystem": {"rootdirectory": str(self.state_dir / "data")},
                    "delete": {"enabled": True},
                },
                "http": {
                    "addr": self.host,
                    "tls": {"certificate": str(pair.cert_file), "key": str(pair.key_file)},
                    "headers": {"X-Content-Type-Options": ["nosniff"]},
                },
            }
            self._config_file.write_text(json.dumps(config))  # YAML is a superset of JSON
            try:
                self._serve(binary, what="the registry to answer /v2/")
                return time.monotonic() - started
            except process.ComponentFailure as failure:
                self.down()
                if "address already in use" not in str(failure):
                    raise
        raise process.ComponentFailure("the registry could not bind a free port in 3 attempts")

    def down(self) -> None:
        state = self._load()
        if state is not None:
            self._stop(*state)
        self._state_file.unlink(missing_ok=True)
        self._pid = None

    def pause(self) -> None:
        """Stop the registry but keep its port, certificate and stored images, so `resume` brings
        the same registry back (an outage, for tests of what clients do meanwhile)."""
        state = self._load()
        if state is None:
            raise RuntimeError("the registry is not up")
        self._stop(*state)
        self._pid = None

    def resume(self) -> float:
        """Start the registry `pause` stopped, on the same port with the same images; return the
        seconds until it answered `/v2/`."""
        binary = shutil.which(self.options.binary)
        if binary is None or self._port is None:
            raise RuntimeError("resume needs a registry that was up and paused")
        started = time.monotonic()
        self._serve(binary, what="the registry to answer /v2/ again")
        return time.monotonic() - started

    def _serve(self, binary: str, *, what: str) -> None:
        """Start the registry on `self._port` with the written configuration; wait until it answers."""
        self._pid = process.spawn(
            [binary, "serve", str(self._config_file)],
            log_file=self._log,
            tie_to_parent=self.options.tie_to_parent,
        )
        self._state_file.write_text(json.dumps({"port": self._port, "pid": self._pid}))
        process.wait_until(
            lambda: self.rest.raw("GET", "/v2/")[0] == 200,
            timeout=self.options.start_timeout,
            what=what,
            alive=self.check,
        )

    def _stop(self, pid: int, port: int) -> None:
        process.stop(pid)
        process.wait_until(
            lambda: not process.port_is_listening(port, self.options.address),
            timeout=10,
            what="the registry port to close",
        )

    def check(self) -> None:
        if self._pid is not None and not process.is_alive(self._pid):
            raise process.ComponentFailure(f"the registry died:\n{process.log_tail(self._log)}")

    def _load(self) -> tuple[int, int] | None:
        try:
            data = json.loads(self._state_file.read_text())
            return int(data["pid"]), int(data["port"])
        except (FileNotFoundError, KeyError, ValueError):
            return None

    def running(self) -> bool:
        """Whether the registry this state directory records is up and answering (then `host` is
        where it listens); changes nothing either way."""
        state = self._load()
        if state is None:
            return False
        self._pid, self._port = state
        try:
            return process.is_alive(self._pid) and self.rest.raw("GET", "/v2/")[0] == 200
        except OSError:
            return False

    def _reuse(self) -> bool:
        if self.running():
            return True
        self.down()
        return False
