"""A smaller read buffer for every TLS connection of the process.

asyncio gives each TLS connection a 256 KiB read buffer (`asyncio.sslproto.SSLProtocol.max_size`),
written in full when the connection is made, so it is resident for the connection's life. Both
processes hold TLS connections: watches, catalog and image downloads, and (catalogd) the clients of
its HTTPS server. operator-controller holds many long-lived ones: a watch per (ServiceAccount,
owner, kind) of the drift watches, and a connection pool per ServiceAccount. With 22 extensions that
was 368 connections and about 92 MiB of buffers, most of the process's memory. `olm.process.main`
calls `limit()` before anything connects.

`READ_BUFFER_BYTES` (32 KiB) still holds two full TLS records (at most 16 KiB of payload each);
larger bodies (catalog packages, bundle layers) arrive in more, smaller reads.
"""

from __future__ import annotations

import asyncio.sslproto

__all__ = ["READ_BUFFER_BYTES", "limit"]

READ_BUFFER_BYTES = 32 << 10


def limit() -> None:
    """Make TLS connections opened from now on read at most `READ_BUFFER_BYTES` at a time."""
    asyncio.sslproto.SSLProtocol.max_size = READ_BUFFER_BYTES
