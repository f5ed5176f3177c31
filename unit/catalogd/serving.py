"""Test helper: a real CatalogServer on 127.0.0.1 over TLS, and a client that trusts it."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from olm.catalogd.server import CatalogServer, CatchUp, ServerOptions
from olm.catalogd.storage import Storage
from olm_runtime.testing.pki import CertificateAuthority, KeyPair


@dataclass
class Served:
    server: CatalogServer
    ca: CertificateAuthority
    pair: KeyPair
    session: aiohttp.ClientSession

    @property
    def base(self) -> str:
        return f"https://127.0.0.1:{self.server.port}/catalogs"

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca.cert_file))


@contextlib.asynccontextmanager
async def serving(
    storage: Storage, tmp: Path, *, catch_up: CatchUp | None = None, **options: Any
) -> AsyncIterator[Served]:
    await storage.wait_compressed()  # tests of the gzip form need it written
    ca = CertificateAuthority.load_or_create(tmp / "ca")
    pair = ca.issue("catalogd", common_name="catalogd", hosts=["127.0.0.1", "localhost"])
    settings: dict[str, Any] = {"host": "127.0.0.1", "port": 0, "cert_reload_interval": 3600.0, **options}
    server = CatalogServer(
        storage,
        ServerOptions(cert_file=pair.cert_file, key_file=pair.key_file, **settings),
        catch_up=catch_up,
    )
    task = asyncio.create_task(server.start())
    await asyncio.wait_for(server.ready.wait(), 10)
    context = ssl.create_default_context(cafile=str(ca.cert_file))
    connector = aiohttp.TCPConnector(ssl=context, force_close=True)
    async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as session:
        try:
            yield Served(server=server, ca=ca, pair=pair, session=session)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
