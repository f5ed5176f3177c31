"""The serving certificate of a TLS server, reloaded when its files change.

Every TLS server a process runs serves its certificate the same way: the webhook server, the secure
metrics server, and servers of the process's own built on the manager (catalogd's content server).
`ServingCertificate` holds what they share: where the files are, the TLS profile (versions, suites
and curve, `tlsprofile`) and how often the files are looked at (`WebhookOptions` and
`SecureMetricsOptions` are `ServingCertificate`s with fields of their own); `CertWatcher` loads the
files and keeps them current.

The listening socket keeps one TLS context for its whole life. Its `sni_callback` runs at the start
of every handshake (with or without a server name from the client) and hands the connection the
newest context, so a rotated certificate is served from the next connection on, without a restart
and without touching connections already open. The files are polled: a change of size, mtime or inode
of either file triggers a reload. A pair that fails to load (say, the key is written but the
certificate not yet) keeps the previous context and is tried again at the next poll.

Metrics: `certwatcher_read_certificate_total`, `certwatcher_read_certificate_errors_total`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from prometheus_client import Counter

from olm_runtime import logging, metrics
from olm_runtime.manager import tlsprofile

__all__ = ["CertWatcher", "ServingCertificate", "server_context"]

_log = logging.get_logger("olm_runtime.manager.certwatcher")

READS = Counter(
    "certwatcher_read_certificate_total",
    "Total number of certificate reads.",
    registry=metrics.REGISTRY,
)
READ_ERRORS = Counter(
    "certwatcher_read_certificate_errors_total",
    "Total number of certificate read errors.",
    registry=metrics.REGISTRY,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ServingCertificate:
    """Which certificate a TLS server serves and how it follows rotation; the fields every TLS server
    of the manager shares (its options class adds its own: an address, a default directory)."""

    cert_dir: Path | None = None
    """The directory holding the serving certificate and key, re-read when they change (a mounted
    Secret, typically). What None means is the server's to say."""
    cert_name: str = "tls.crt"
    """The certificate file (PEM, leaf first, then intermediates) inside `cert_dir`."""
    key_name: str = "tls.key"
    """The private key file (PEM) inside `cert_dir`."""
    tls_profile: tlsprofile.Profile = tlsprofile.INTERMEDIATE
    """The TLS versions, suites and curve accepted (upstream's default, Intermediate: TLS 1.2 with
    ECDHE and AEAD suites, and TLS 1.3)."""
    cert_poll_interval: float = 10.0
    """Seconds between checks of the certificate files for a rotation."""

    _server_name: ClassVar[str] = "the server"
    """How errors name the server these options are for."""

    def __post_init__(self) -> None:
        if self.cert_poll_interval <= 0:
            raise ValueError("cert_poll_interval must be positive")

    @property
    def cert_file(self) -> Path | None:
        return self.cert_dir / self.cert_name if self.cert_dir is not None else None

    @property
    def key_file(self) -> Path | None:
        return self.cert_dir / self.key_name if self.cert_dir is not None else None

    def watcher(self, *, alpn_protocols: Sequence[str] = ()) -> CertWatcher:
        """A watcher of these files (`ValueError` without `cert_dir`)."""
        if self.cert_dir is None:
            raise ValueError(f"{self._server_name} has no cert_dir to watch")
        return CertWatcher(
            self.cert_dir / self.cert_name,
            self.cert_dir / self.key_name,
            tls_profile=self.tls_profile,
            poll_interval=self.cert_poll_interval,
            alpn_protocols=alpn_protocols,
        )


def server_context(
    cert_file: Path,
    key_file: Path,
    *,
    tls_profile: tlsprofile.Profile = tlsprofile.INTERMEDIATE,
    alpn_protocols: Sequence[str] = (),
) -> ssl.SSLContext:
    """A server context for the certificate and key as the files hold them now, never reloaded: what
    `CertWatcher` makes at each rotation, and all a short-lived server (a test's) needs. Raises
    `OSError` or `ssl.SSLError` when they cannot be read."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls_profile.apply(context)
    if alpn_protocols:
        context.set_alpn_protocols(list(alpn_protocols))
    context.load_cert_chain(cert_file, key_file)
    return context


_Signature = tuple[tuple[int, int, int], ...]


def _signature(*paths: Path) -> _Signature:
    stats = [os.stat(path) for path in paths]
    return tuple((stat.st_ino, stat.st_size, stat.st_mtime_ns) for stat in stats)


class CertWatcher:
    """Loads a certificate and key pair and keeps `server_context()` serving the newest while
    `start()` runs, under `tls_profile`. `alpn_protocols` are offered in the handshake (say,
    `("http/1.1",)`)."""

    def __init__(
        self,
        cert_file: Path,
        key_file: Path,
        *,
        tls_profile: tlsprofile.Profile = tlsprofile.INTERMEDIATE,
        poll_interval: float = 10.0,
        alpn_protocols: Sequence[str] = (),
    ) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self._tls_profile = tls_profile
        self._poll_interval = poll_interval
        self._alpn_protocols = tuple(alpn_protocols)
        self._current: ssl.SSLContext | None = None
        self._signature: _Signature | None = None

    def _new_context(self) -> ssl.SSLContext:
        return server_context(
            self.cert_file,
            self.key_file,
            tls_profile=self._tls_profile,
            alpn_protocols=self._alpn_protocols,
        )

    def load(self) -> bool:
        """Read the files if they changed since the last read; True if a new pair is now served.
        Raises `OSError` or `ssl.SSLError` when they cannot be read."""
        signature = _signature(self.cert_file, self.key_file)
        if signature == self._signature:
            return False
        READS.inc()
        try:
            context = self._new_context()
        except (OSError, ssl.SSLError):
            READ_ERRORS.inc()
            raise
        self._current, self._signature = context, signature
        return True

    def server_context(self) -> ssl.SSLContext:
        """The context to listen with: it delegates every handshake to the newest loaded pair.
        Call `load()` first."""
        if self._current is None:
            raise RuntimeError("no certificate loaded yet")
        listening = self._new_context()
        listening.sni_callback = self._choose
        return listening

    def _choose(self, connection: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        if self._current is not None:
            connection.context = self._current

    async def start(self) -> None:
        """Poll the files until cancelled."""
        while True:
            await asyncio.sleep(self._poll_interval)
            try:
                if self.load():
                    _log.info("serving certificate reloaded", cert_file=str(self.cert_file))
            except (OSError, ssl.SSLError) as e:
                _log.warning(
                    "serving certificate reload failed; keeping the previous one",
                    cert_file=str(self.cert_file),
                    error=str(e),
                )
