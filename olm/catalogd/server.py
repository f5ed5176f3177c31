"""catalogd's HTTPS content server: each stored catalog at `<prefix>/<name>/api/v1/{all,metas}`.

- `GET|HEAD <prefix>/<name>/api/v1/all`: the whole catalog as JSONL (`application/jsonl`), with
  `Range` support (one range; 206, or 416 when unsatisfiable).
- `GET|HEAD <prefix>/<name>/api/v1/metas?schema=&package=&name=`: the metas matching every given
  parameter (empty ones are ignored; none at all is the whole catalog); any other parameter, or
  one given twice, is a 400.
- Both carry `Last-Modified` (when the version was stored) and a strong `ETag` (a hash of the
  content, and of the query for `metas`; `-gzip` appended for the gzip encoding), and answer
  `If-None-Match` / `If-Modified-Since` with 304 and `If-Match` / `If-Unmodified-Since` with 412.
- gzip when `Accept-Encoding` allows it and the body is over `gzip_min_bytes`: `all`, and a `metas`
  answer that is the whole catalog, from the file compressed once per version after it was stored
  (identity, or compressed while streaming, until that file exists); other `metas` answers are
  compressed off the event loop, once per catalog version and query, and kept in memory up to
  `metas_gzip_cache_bytes` (`gzipcache`); answers too large for it are compressed while streaming.
- 400 for a name that is not a DNS-1123 subdomain, 404 for a catalog not being served, 405 (with
  `Allow`) for other methods. TLS only, under `tls_profile` (Intermediate: TLS 1.2 or newer with
  ECDHE and AEAD suites; `olm_runtime.manager.tlsprofile`), ALPN `http/1.1`, with the certificate
  reloaded when its files change (the runtime's `olm_runtime.manager.certwatcher`, as the webhook
  and metrics servers do).

Bodies stream from disk in chunks read by worker threads; nothing loads a catalog into memory. A
client that stops reading for `write_stall_timeout` seconds is disconnected; a slow client that
keeps reading may take as long as it needs, so 100+ MB catalogs download over slow links.

Hostile clients are bounded (see `docs/catalogd/content-server-limits.md`): the TLS handshake must
finish within `tls_handshake_timeout`, a request head must arrive complete within `idle_timeout`
of the handshake or of the previous response (which cuts off slowloris clients and idle
keep-alive connections alike), request lines and header fields are capped, a `GET`/`HEAD` with a
body is a 400 whose body is discarded for at most `body_linger_timeout`, and a request the HTTP
parser rejects is a 400 logged as one line, without a traceback.

Every request is timed in `catalogd_http_request_duration_seconds{code}`, its body counted in
`catalogd_http_response_bytes_total{endpoint,code}`, and logged with structlog, inside a tracing
server span that continues the caller's trace (W3C `traceparent`).

What outlives a request runs in tasks the server owns (`background`): the catch-up of a catalog
this replica does not hold yet, and the gzip bodies of `metas` answers (`gzipcache`). They are
cancelled and awaited when the server stops.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import http_exceptions, web
from opentelemetry import trace

from olm.catalogd import conditional, metrics
from olm.catalogd.background import Background
from olm.catalogd.gzipcache import CompressedBodies
from olm.catalogd.sections import SectionReader
from olm.catalogd.storage import Storage, StoredCatalog, is_valid_name
from olm_runtime import tracing
from olm_runtime.logging import get_logger
from olm_runtime.manager import tlsprofile
from olm_runtime.manager.certwatcher import CertWatcher

_log = get_logger("catalogd.server")
JSONL = "application/jsonl"
METAS_PARAMS = ("schema", "package", "name")


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """Where and how the content server listens."""

    cert_file: Path
    """PEM certificate chain; reloaded when the file (or `key_file`) changes."""
    key_file: Path
    """PEM private key of `cert_file`."""
    host: str = "0.0.0.0"
    """Interface to listen on (every interface by default, as a server in a pod does)."""
    port: int = 8443
    """0 picks a free port (see `CatalogServer.port`)."""
    path_prefix: str = "/catalogs"
    """Root of the catalog URLs (the path of catalogd's external address)."""
    chunk_bytes: int = 256 << 10
    """Bytes read from disk per step of a response body."""
    gzip_min_bytes: int = 1400
    """Bodies this small are never compressed."""
    gzip_level: int = 5
    """zlib level for `metas` responses compressed on the fly."""
    metas_gzip_cache_bytes: int = 16 << 20
    """Bytes of compressed `metas` bodies kept in memory for the next request of the same query
    (0 turns the cache off); bodies over a quarter of it are compressed on the fly each time."""
    write_stall_timeout: float = 60.0
    """Seconds a client may leave a chunk unread before it is disconnected."""
    idle_timeout: float = 15.0
    """Seconds a connection may go without a complete request head, counted from the end of the
    handshake or of the previous response: idle keep-alive connections and clients that send
    their headers byte by byte (slowloris) are both closed after it."""
    tls_handshake_timeout: float = 10.0
    """Seconds a new connection gets to finish the TLS handshake."""
    body_linger_timeout: float = 2.0
    """Seconds spent reading and discarding a refused request body before the connection closes."""
    max_request_line_bytes: int = 8190
    """Longest request line (method, URL, version); longer is a 400."""
    max_header_field_bytes: int = 8190
    """Longest header line; longer is a 400."""
    max_headers: int = 100
    """Most header fields in one request; more is a 400."""
    shutdown_timeout: float = 30.0
    """Seconds in-flight requests get to finish on shutdown."""
    cert_reload_interval: float = 10.0
    """Seconds between checks of the certificate files."""
    catch_up_timeout: float = 30.0
    """Seconds a request for a catalog this replica does not hold yet waits for `catch_up`."""
    tls_profile: tlsprofile.Profile = tlsprofile.INTERMEDIATE
    """The TLS versions, suites and curve accepted (`--tls-profile` and `--tls-custom-*`)."""


class NotHeldHere(Exception):
    """`catch_up` cannot get the catalog onto this replica now (the message says why)."""


CatchUp = Callable[[str], Coroutine[Any, Any, StoredCatalog | None]]
"""Given a catalog name this replica does not serve: the version it should serve, fetched now, or
None when the catalog is not to be served at all."""


class CatalogServer:
    """Serves `storage` over HTTPS; `start()` blocks until cancelled (a manager runnable)."""

    def __init__(self, storage: Storage, options: ServerOptions, *, catch_up: CatchUp | None = None) -> None:
        self.storage = storage
        self.options = options
        self.catch_up = catch_up
        """Asked on a miss: a replica behind the leader (which reported the catalog served before
        this one stored it) fetches it while the request waits, instead of answering 404."""
        self.certificates = CertWatcher(
            options.cert_file,
            options.key_file,
            tls_profile=options.tls_profile,
            poll_interval=options.cert_reload_interval,
            alpn_protocols=("http/1.1",),
        )
        """The serving certificate, read now (a missing or bad pair fails here) and while `start`
        runs whenever its files change."""
        self.certificates.load()
        self.ready = asyncio.Event()
        self._port: int | None = None
        self._bodies = CompressedBodies(options.metas_gzip_cache_bytes)
        self._catch_ups = Background("catalog-server")

    @property
    def port(self) -> int:
        """The bound port (useful with `port=0`); valid once `ready` is set."""
        if self._port is None:
            raise RuntimeError("the catalog server is not listening yet")
        return self._port

    def application(self) -> web.Application:
        app = web.Application(middlewares=[_observe, _refuse_body])
        base = self.options.path_prefix.rstrip("/")
        app.router.add_get(f"{base}/{{name}}/api/v1/all", self._all)
        app.router.add_get(f"{base}/{{name}}/api/v1/metas", self._metas)
        return app

    async def start(self) -> None:
        options = self.options
        runner = web.AppRunner(
            self.application(),
            access_log=None,
            logger=_HTTP_LOG,
            keepalive_timeout=options.idle_timeout,
            lingering_time=options.body_linger_timeout,
            max_line_size=options.max_request_line_bytes,
            max_field_size=options.max_header_field_bytes,
            max_headers=options.max_headers,
            shutdown_timeout=options.shutdown_timeout,
        )
        await runner.setup()
        try:
            site = _TLSSite(
                runner,
                options.host,
                options.port,
                self.certificates.server_context(),
                options.tls_handshake_timeout,
            )
            await site.start()
            self._port = site.port
            self.ready.set()
            _log.info("catalog_server.listening", host=self.options.host, port=self._port)
            await self.certificates.start()
        finally:
            self.ready.clear()
            await runner.cleanup()
            await self._catch_ups.aclose()
            await self._bodies.aclose()

    async def _catalog(self, request: web.Request) -> StoredCatalog:
        name = request.match_info["name"]
        if not is_valid_name(name):
            raise web.HTTPBadRequest(
                text=f"invalid catalog name {name!r}: must be a DNS-1123 subdomain "
                "(lowercase letters, digits, '-' and '.', at most 253 characters)"
            )
        stored = self.storage.get(name)
        if stored is None and self.catch_up is not None:
            # A task of its own, shielded: a client giving up must not cancel the unpack other
            # requests wait for.
            work = self._catch_ups.spawn(
                self.catch_up(name), name=f"catch up {name}", expected=(NotHeldHere,)
            )
            try:
                stored = await asyncio.wait_for(asyncio.shield(work), self.options.catch_up_timeout)
            except TimeoutError:
                raise _unavailable(
                    f"catalog {name!r} is still being fetched by this replica; retry"
                ) from None
            except NotHeldHere as error:
                raise _unavailable(f"catalog {name!r} is not available on this replica: {error}") from None
        if stored is None:
            raise web.HTTPNotFound(text=f"catalog {name!r} is not being served")
        return stored

    async def _all(self, request: web.Request) -> web.StreamResponse:
        stored = await self._catalog(request)
        tag = stored.content_hash[:40]
        # The stored gzip form's size when it is the answer; until the background compression has
        # written it, `all` goes out as it is.
        accepted = conditional.accepts_gzip(request.headers.get("Accept-Encoding"))
        gzip_size = stored.gzip_size() if accepted and stored.size >= self.options.gzip_min_bytes else None
        gzip_ok = gzip_size is not None
        headers = _common_headers(stored)
        headers["Accept-Ranges"] = "bytes"
        etags = (f'"{tag}"', f'"{tag}-gzip"')
        early = _preconditions(request, headers, etags, stored.stored_at, etags[1] if gzip_ok else etags[0])
        if early is not None:
            return early
        range_header = request.headers.get("Range")
        if range_header is not None and conditional.if_range_allows(
            request.headers.get("If-Range"), etag=etags[0], last_modified=stored.stored_at
        ):
            try:
                byte_range = conditional.parse_range(range_header, stored.size)
            except conditional.Unsatisfiable:
                headers["Content-Range"] = f"bytes */{stored.size}"
                raise web.HTTPRequestRangeNotSatisfiable(headers=headers) from None
            if byte_range is not None:
                headers["ETag"] = etags[0]
                headers["Content-Range"] = byte_range.content_range(stored.size)
                sections = [(byte_range.start, byte_range.length)]
                return await self._send(request, headers, stored.all_path, sections, status=206)
        if gzip_size is not None:
            headers.update({"ETag": etags[1], "Content-Encoding": "gzip"})
            return await self._send(request, headers, stored.gzip_path, [(0, gzip_size)])
        headers["ETag"] = etags[0]
        return await self._send(request, headers, stored.all_path, [(0, stored.size)])

    async def _metas(self, request: web.Request) -> web.StreamResponse:
        query = request.query
        for key in query:
            if key not in METAS_PARAMS:
                raise web.HTTPBadRequest(
                    text=f"unknown query parameter {key!r}: use schema, package and name"
                )
            if len(query.getall(key)) > 1:
                raise web.HTTPBadRequest(text=f"query parameter {key!r} is given more than once")
        stored = await self._catalog(request)
        wanted = {key: query.get(key, "") for key in METAS_PARAMS}
        key = "\0".join([stored.content_hash, *(wanted[k] for k in METAS_PARAMS)])
        tag = hashlib.sha256(key.encode()).hexdigest()[:40]
        index = stored.loaded_index()
        if index is None:
            index = await asyncio.to_thread(stored.index)
        sections = index.select(**wanted)
        length = sum(size for _, size in sections)
        gzip_ok = conditional.accepts_gzip(request.headers.get("Accept-Encoding"))
        gzip_ok = gzip_ok and length >= self.options.gzip_min_bytes
        headers = _common_headers(stored)
        etags = (f'"{tag}"', f'"{tag}-gzip"')
        early = _preconditions(request, headers, etags, stored.stored_at, etags[1] if gzip_ok else etags[0])
        if early is not None:
            return early
        if gzip_ok:
            headers.update({"ETag": etags[1], "Content-Encoding": "gzip"})
            whole = stored.gzip_size() if sections == [(0, stored.size)] else None
            if whole is not None:
                return await self._send(request, headers, stored.gzip_path, [(0, whole)])
            if self._bodies.cacheable(length):
                return await self._send_compressed(request, headers, stored.all_path, sections, key=tag)
            return await self._send(request, headers, stored.all_path, sections, compress=True)
        headers["ETag"] = etags[0]
        return await self._send(request, headers, stored.all_path, sections)

    async def _send_compressed(
        self,
        request: web.Request,
        headers: dict[str, str],
        path: Path,
        sections: list[tuple[int, int]],
        *,
        key: str,
    ) -> web.StreamResponse:
        """Answer with the gzip body of `sections` from the cache, compressing it on a miss (`key`
        names the catalog content and the query)."""
        level = self.options.gzip_level

        def compress() -> bytes:
            reader = SectionReader(path, sections, level)
            try:
                return b"".join(iter(lambda: reader.read(1 << 20), b""))
            finally:
                reader.close()

        try:
            body = await self._bodies.get(key, compress)
        except FileNotFoundError:  # the version was replaced between lookup and open
            raise web.HTTPServiceUnavailable(text="the catalog changed while being read; retry") from None
        response = web.StreamResponse(headers=headers)
        response.content_length = len(body)
        await response.prepare(request)
        if request.method != "HEAD":
            view = memoryview(body)
            step = self.options.chunk_bytes
            for start in range(0, len(body), step):
                await self._write(request, response, view[start : start + step])
            await response.write_eof()
        return response

    async def _send(
        self,
        request: web.Request,
        headers: dict[str, str],
        path: Path,
        sections: list[tuple[int, int]],
        *,
        status: int = 200,
        compress: bool = False,
    ) -> web.StreamResponse:
        """Stream the `(offset, size)` sections of `path`, gzipped on the fly when `compress` (whose
        length is unknown until the end, so the response is chunked)."""
        response = web.StreamResponse(status=status, headers=headers)
        if not compress:
            response.content_length = sum(size for _, size in sections)
        if request.method == "HEAD":
            await response.prepare(request)
            return response
        try:
            reader = SectionReader(path, sections, self.options.gzip_level if compress else None)
        except FileNotFoundError:  # the version was replaced between lookup and open
            raise web.HTTPServiceUnavailable(text="the catalog changed while being read; retry") from None
        loop = asyncio.get_running_loop()
        try:
            await response.prepare(request)
            step = self.options.chunk_bytes
            while True:
                chunk = reader.read_cached(step)
                if chunk is None:  # not in the page cache, or compressed: the worker's job
                    chunk = await loop.run_in_executor(None, reader.read, step)
                if not chunk:
                    break
                await self._write(request, response, chunk)
            await response.write_eof()
        finally:
            reader.close()
        return response

    async def _write(
        self, request: web.Request, response: web.StreamResponse, chunk: bytes | bytearray | memoryview
    ) -> None:
        """Write one chunk of a body, disconnecting a client that leaves it unread too long."""
        try:
            # A timeout scope, not wait_for: wait_for wraps each chunk's write in a task of its own.
            async with asyncio.timeout(self.options.write_stall_timeout):
                await response.write(chunk)
        except TimeoutError:
            if request.transport is not None:
                request.transport.abort()
            raise ConnectionResetError("the client stopped reading") from None


def _unavailable(text: str) -> web.HTTPServiceUnavailable:
    return web.HTTPServiceUnavailable(text=text, headers={"Retry-After": "5"})


class _TLSSite(web.BaseSite):
    """A TCP listener like `web.TCPSite`, plus a bound on the TLS handshake (which `TCPSite` leaves
    at asyncio's 60 seconds)."""

    def __init__(
        self, runner: web.AppRunner, host: str, port: int, context: ssl.SSLContext, handshake_timeout: float
    ) -> None:
        super().__init__(runner, ssl_context=context)
        self._host = host
        self._port = port
        self._handshake_timeout = handshake_timeout
        self._bound_port: int | None = None

    @property
    def name(self) -> str:
        return f"https://{self._host}:{self._port}"

    @property
    def port(self) -> int:
        """The bound port (the requested one until started)."""
        return self._bound_port or self._port

    async def start(self) -> None:
        await super().start()
        server = self._runner.server
        if server is None:
            raise RuntimeError("the runner is not set up")
        listening = await asyncio.get_running_loop().create_server(
            server,
            self._host,
            self._port,
            ssl=self._ssl_context,
            ssl_handshake_timeout=self._handshake_timeout,
            backlog=self._backlog,
        )
        self._server = listening
        self._bound_port = int(listening.sockets[0].getsockname()[1]) if listening.sockets else None


class _OneLineClientErrors(logging.Filter):
    """aiohttp logs each request its parser rejects (too long, malformed, smuggling attempts), and
    each client that hangs up mid-answer, with a traceback at ERROR, so one hostile client could
    flood the log; each becomes one structured line here. Other errors (a bug answered with a
    500) keep their traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, http_exceptions.HttpProcessingError):
            first_line = error.message.strip().splitlines()[0] if error.message.strip() else ""
            _log.info("http.malformed_request", status=error.code, error=first_line[:120])
            return False
        if isinstance(error, ConnectionError):
            _log.info("http.client_gone", error=str(error)[:120])
            return False
        return True


_HTTP_LOG = logging.getLogger("catalogd.server.http")
_HTTP_LOG.addFilter(_OneLineClientErrors())


DIGEST_HEADER = "Olm-Catalog-Digest"
"""Names the image digest whose content a response carries: a replica that has not caught up yet
with a new digest answers with the old one, and clients can tell instead of caching it wrongly."""


def _common_headers(stored: StoredCatalog) -> dict[str, str]:
    return {
        DIGEST_HEADER: stored.digest,
        "Content-Type": JSONL,
        "Last-Modified": conditional.http_date(stored.stored_at),
        "Vary": "Accept-Encoding",
        "Cache-Control": "no-cache",
    }


def _preconditions(
    request: web.Request, headers: dict[str, str], etags: tuple[str, str], modified: float, chosen: str
) -> web.Response | None:
    outcome = conditional.evaluate(
        request.headers, etags=etags, last_modified=modified, method=request.method
    )
    if outcome is conditional.Outcome.NOT_MODIFIED:
        return web.Response(status=304, headers={**headers, "ETag": chosen})
    if outcome is conditional.Outcome.PRECONDITION_FAILED:
        return web.Response(status=412, headers={"Vary": "Accept-Encoding"}, text="precondition failed")
    return None


@web.middleware
async def _observe(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Time, count and log each request inside a server span, the child of the caller's span its
    `traceparent` names (so an install's catalog reads sit in operator-controller's trace); the log
    line, written inside it, carries its trace and span IDs. Only 5xx answers mark it as failed."""
    started = time.monotonic()
    route = request.match_info.route.resource
    template = route.canonical if route is not None else request.path
    attributes: dict[str, str | int] = {
        "http.request.method": request.method,
        "http.route": template,
        "url.path": request.path,
        "user_agent.original": request.headers.get("User-Agent", ""),
    }
    if request.query_string:
        attributes["url.query"] = request.query_string
    if "name" in request.match_info:
        attributes["olm.catalog"] = request.match_info["name"]
    with tracing.tracer().start_as_current_span(
        f"{request.method} {template}",
        context=tracing.extract(request.headers),
        kind=trace.SpanKind.SERVER,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        status = 500
        response: web.StreamResponse | None = None
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as error:
            status = error.status
            raise
        finally:
            span.set_attribute("http.response.status_code", status)
            if status >= 500:
                span.set_status(trace.StatusCode.ERROR)
            elapsed = time.monotonic() - started
            metrics.REQUEST_DURATION.labels(str(status)).observe(elapsed)
            sent = response.body_length if response is not None else 0  # raised errors count no bytes
            metrics.RESPONSE_BYTES.labels(_endpoint(request.path), str(status)).inc(sent)
            _log.info(
                "http.request",
                method=request.method,
                path=request.path,
                query=request.query_string,
                status=status,
                bytes=sent,
                duration_ms=round(elapsed * 1000, 2),
                remote=request.remote,
                user_agent=request.headers.get("User-Agent", ""),
            )


@web.middleware
async def _refuse_body(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """A `GET` or `HEAD` with a body is refused: the body has no meaning here, and a server that
    ignores it can be made to parse the body as a second request (request smuggling). The
    connection closes after the answer, so the body is never read as one."""
    if request.method in ("GET", "HEAD") and request.body_exists:
        response = web.Response(status=400, text="a GET or HEAD request carries no body")
        response.force_close()
        return response
    return await handler(request)


def _endpoint(path: str) -> metrics.Endpoint:
    for endpoint in (metrics.Endpoint.ALL, metrics.Endpoint.METAS):
        if path.endswith(f"/api/v1/{endpoint.value}"):
            return endpoint
    return metrics.Endpoint.OTHER
