"""The webhook's serving certificate, reloaded when its files change.

The listening socket keeps one TLS context for its whole life. Its `sni_callback` runs at the start
of every handshake (with or without a server name from the client) and hands the connection the
newest context, so a rotated certificate is served from the next connection on, without a restart
and without touching connections already open. The files are polled: a change of size, mtime or inode
of either file triggers a reload. A pair that fails to load (say, the key is written but the
certificate not yet) keeps the previous context and is tried again at the next poll.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from pathlib import Path

from prometheus_client import Counter

from olm_runtime import logging, metrics

_log = logging.get_logger("olm_runtime.manager.webhook")

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

_Signature = tuple[tuple[int, int, int], ...]


def _signature(*paths: Path) -> _Signature:
    stats = [os.stat(path) for path in paths]
    return tuple((stat.st_ino, stat.st_size, stat.st_mtime_ns) for stat in stats)


class CertWatcher:
    """Loads a certificate and key pair and keeps `context` current while `start()` runs."""

    def __init__(
        self,
        cert_file: Path,
        key_file: Path,
        *,
        minimum_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2,
        poll_interval: float = 10.0,
    ) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self._minimum_version = minimum_version
        self._poll_interval = poll_interval
        self._current: ssl.SSLContext | None = None
        self._signature: _Signature | None = None

    def _new_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = self._minimum_version
        return context

    def load(self) -> bool:
        """Read the files if they changed since the last read; True if a new pair is now served.
        Raises `OSError` or `ssl.SSLError` when they cannot be read."""
        signature = _signature(self.cert_file, self.key_file)
        if signature == self._signature:
            return False
        READS.inc()
        context = self._new_context()
        try:
            context.load_cert_chain(self.cert_file, self.key_file)
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
        listening.load_cert_chain(self.cert_file, self.key_file)
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
