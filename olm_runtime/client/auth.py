"""Bearer-token sources. The transport asks its provider for a token on every request, so tokens
that rotate (projected ServiceAccount tokens, exec plugins, TokenRequest) are picked up without
reconnecting. After a 401 the transport calls `invalidate()` and retries once with a fresh token.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import orjson

from olm_runtime import clock as clocks

__all__ = [
    "CredentialError",
    "ExecCredentials",
    "ExecPlugin",
    "ExecResult",
    "FileToken",
    "StaticToken",
    "TokenProvider",
]

WallClock = Callable[[], float]
"""Seconds since the epoch, as `time.time`: what credential expiry times are compared with."""


class CredentialError(Exception):
    """A credential source failed (exec plugin exited non-zero, token file missing, ...)."""


class TokenProvider(Protocol):
    """A source of bearer tokens."""

    async def token(self) -> str:
        """The token to send now (cached by the provider as it sees fit)."""
        ...

    def invalidate(self) -> None:
        """Forget any cached token: the server rejected it."""
        ...


@dataclass(frozen=True)
class StaticToken:
    """A fixed token, e.g. from a kubeconfig's `token` field."""

    value: str

    async def token(self) -> str:
        return self.value

    def invalidate(self) -> None:
        pass


class FileToken:
    """A token read from a file and re-read periodically, as a projected ServiceAccount token rotates.

    The kubelet rewrites the file well before the old token expires, so re-reading once a minute (or
    after a 401) is enough.
    """

    def __init__(
        self, path: str | Path, *, reload_after: float = 60.0, clock: clocks.Clock = clocks.REAL
    ) -> None:
        self.path = Path(path)
        self._reload_after = reload_after
        self._clock = clock
        self._value: str | None = None
        self._read_at = 0.0

    async def token(self) -> str:
        now = self._clock.now()
        if self._value is None or now - self._read_at >= self._reload_after:
            try:
                self._value = self.path.read_text().strip()
            except OSError as e:
                raise CredentialError(f"cannot read token file {self.path}: {e}") from e
            self._read_at = now
        return self._value

    def invalidate(self) -> None:
        self._value = None


@dataclass(frozen=True, kw_only=True)
class ExecPlugin:
    """A kubeconfig `user.exec` stanza: a command printing an `ExecCredential` as JSON."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    api_version: str = "client.authentication.k8s.io/v1"
    install_hint: str = ""
    cluster: Mapping[str, Any] | None = None
    """Sent to the plugin in `KUBERNETES_EXEC_INFO` when the kubeconfig sets `provideClusterInfo`."""


@dataclass(frozen=True)
class ExecResult:
    """What an exec plugin returned."""

    token: str | None
    client_certificate_data: str | None
    client_key_data: str | None
    expires_at: float | None
    """Wall-clock expiry (seconds since the epoch), or None when the credential does not expire."""


_SUPPORTED_EXEC_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")


def _parse_timestamp(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


class ExecCredentials:
    """Runs an exec credential plugin and caches its result until shortly before it expires.

    Runs are serialised: concurrent callers share one plugin run. Plugins that need a terminal
    (`interactiveMode: Always`) are not supported: the plugin's stdin is closed.
    """

    def __init__(
        self, plugin: ExecPlugin, *, margin: float = 10.0, wall_clock: WallClock = time.time
    ) -> None:
        if plugin.api_version not in _SUPPORTED_EXEC_VERSIONS:
            raise CredentialError(f"exec plugin apiVersion {plugin.api_version!r} is not supported")
        self.plugin = plugin
        self._margin = margin
        self._wall_clock = wall_clock
        self._cached: ExecResult | None = None
        self._lock = asyncio.Lock()

    async def token(self) -> str:
        result = await self.credentials()
        if not result.token:
            raise CredentialError(f"exec plugin {self.plugin.command!r} returned no token")
        return result.token

    def invalidate(self) -> None:
        self._cached = None

    def _fresh(self, result: ExecResult | None) -> bool:
        return result is not None and (
            result.expires_at is None or result.expires_at - self._margin > self._wall_clock()
        )

    async def credentials(self) -> ExecResult:
        """The cached credential, or a new one from the plugin when none is cached or it expires soon."""
        if self._fresh(self._cached):
            assert self._cached is not None
            return self._cached
        async with self._lock:
            if not self._fresh(self._cached):
                self._cached = await self._run()
            assert self._cached is not None
            return self._cached

    def _exec_info(self) -> bytes:
        spec: dict[str, Any] = {"interactive": False}
        if self.plugin.cluster is not None:
            spec["cluster"] = dict(self.plugin.cluster)
        return orjson.dumps({"apiVersion": self.plugin.api_version, "kind": "ExecCredential", "spec": spec})

    async def _run(self) -> ExecResult:
        env = {**os.environ, **self.plugin.env, "KUBERNETES_EXEC_INFO": self._exec_info().decode()}
        try:
            process = await asyncio.create_subprocess_exec(
                self.plugin.command,
                *self.plugin.args,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as e:
            hint = f" ({self.plugin.install_hint})" if self.plugin.install_hint else ""
            raise CredentialError(f"cannot run exec plugin {self.plugin.command!r}: {e}{hint}") from e
        stdout, stderr = await process.communicate()
        if process.returncode != 0:
            raise CredentialError(
                f"exec plugin {self.plugin.command!r} exited with {process.returncode}: "
                f"{stderr.decode(errors='replace').strip()[:1000]}"
            )
        return parse_exec_credential(stdout, self.plugin.api_version)


def parse_exec_credential(output: bytes, api_version: str) -> ExecResult:
    """Parse the `ExecCredential` an exec plugin printed."""
    try:
        credential = orjson.loads(output)
    except orjson.JSONDecodeError as e:
        raise CredentialError(f"exec plugin printed invalid JSON: {e}") from e
    if not isinstance(credential, dict) or credential.get("kind") != "ExecCredential":
        raise CredentialError("exec plugin output is not an ExecCredential")
    if credential.get("apiVersion") != api_version:
        raise CredentialError(
            f"exec plugin returned apiVersion {credential.get('apiVersion')!r}, expected {api_version!r}"
        )
    status = credential.get("status") or {}
    token = status.get("token") or None
    cert, key = status.get("clientCertificateData") or None, status.get("clientKeyData") or None
    if bool(cert) != bool(key):
        raise CredentialError("exec plugin returned a client certificate without its key (or the reverse)")
    if not token and not cert:
        raise CredentialError("exec plugin returned neither a token nor a client certificate and key")
    expiry = status.get("expirationTimestamp")
    return ExecResult(token, cert, key, _parse_timestamp(expiry) if expiry else None)
