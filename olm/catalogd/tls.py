"""A server TLS context whose certificate follows its files: rotate them and new connections use them.

The context handed to the listener stays the same object; for each handshake its SNI callback
switches the connection to the newest successfully loaded context. A watcher compares the files'
identity (inode, size, modification time) every `interval` seconds and reloads on change; a pair
that fails to load (say, the certificate was written before its key) is ignored until the next
change, and the previous certificate stays in use. TLS 1.2 is the minimum; ALPN offers HTTP/1.1.
"""

from __future__ import annotations

import asyncio
import os
import ssl
from pathlib import Path

from olm_runtime.logging import get_logger

_log = get_logger("catalogd.tls")


def server_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    """A TLS 1.2+ server context for one certificate and key."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    context.load_cert_chain(str(cert_file), str(key_file))
    return context


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_ino, info.st_size, info.st_mtime_ns


class ReloadingContext:
    """`context` for the listener; `watch()` runs until cancelled, reloading on file changes."""

    def __init__(self, cert_file: Path, key_file: Path, *, interval: float = 10.0) -> None:
        self.cert_file = cert_file
        self.key_file = key_file
        self.interval = interval
        self.reloads = 0
        self._seen = self._files()
        self._current = server_context(cert_file, key_file)
        self.context = server_context(cert_file, key_file)
        self.context.sni_callback = self._select

    def _files(self) -> tuple[tuple[int, int, int] | None, tuple[int, int, int] | None]:
        return _identity(self.cert_file), _identity(self.key_file)

    def _select(self, connection: ssl.SSLObject, _server_name: str | None, _context: ssl.SSLContext) -> None:
        connection.context = self._current

    def reload_if_changed(self) -> bool:
        """Load the files again if they changed since the last look; whether a new pair is in use."""
        seen = self._files()
        if seen == self._seen:
            return False
        self._seen = seen
        try:
            self._current = server_context(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as error:
            _log.warning("tls.reload_failed", cert_file=str(self.cert_file), error=str(error))
            return False
        self.reloads += 1
        _log.info("tls.reloaded", cert_file=str(self.cert_file))
        return True

    async def watch(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.reload_if_changed()
