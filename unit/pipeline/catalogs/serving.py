"""Test helper: the real catalogd content server on 127.0.0.1 over TLS, with a request log."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from olm.catalogd.server import CatalogServer, ServerOptions
from olm.catalogd.storage import Storage
from olm_runtime.testing.pki import CertificateAuthority

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Seen:
    path: str
    query: str
    status: int


@dataclass
class Running:
    server: CatalogServer
    ca_file: Path
    log: list[Seen] = field(default_factory=list)

    def base(self, catalog: str) -> str:
        return f"https://127.0.0.1:{self.server.port}/catalogs/{catalog}"


class _Recording(CatalogServer):
    """The real server plus a middleware noting each request; `metas=False` drops that route (an
    older catalogd that only serves `all`)."""

    def __init__(self, storage: Storage, options: ServerOptions, log: list[Seen], *, metas: bool) -> None:
        super().__init__(storage, options)
        self._log = log
        self._metas_enabled = metas

    def application(self) -> web.Application:
        app = super().application()
        if not self._metas_enabled:
            app = web.Application(middlewares=list(app.middlewares))
            app.router.add_get(f"{self.options.path_prefix}/{{name}}/api/v1/all", self._all)

        @web.middleware
        async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
            try:
                response = await handler(request)
            except web.HTTPException as err:
                self._log.append(Seen(request.path, request.query_string, err.status))
                raise
            self._log.append(Seen(request.path, request.query_string, response.status))
            return response

        app.middlewares.insert(0, record)
        return app


@contextlib.asynccontextmanager
async def serving(storage: Storage, tmp: Path, *, metas: bool = True) -> AsyncIterator[Running]:
    ca = CertificateAuthority.load_or_create(tmp / "ca")
    pair = ca.issue("catalogd", common_name="catalogd", hosts=["127.0.0.1", "localhost"])
    options = ServerOptions(
        cert_file=pair.cert_file,
        key_file=pair.key_file,
        host="127.0.0.1",
        port=0,
        cert_reload_interval=3600.0,
    )
    log: list[Seen] = []
    server = _Recording(storage, options, log, metas=metas)
    task = asyncio.create_task(server.start())
    try:
        await asyncio.wait_for(server.ready.wait(), 10)
        yield Running(server=server, ca_file=ca.cert_file, log=log)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
