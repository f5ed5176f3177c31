"""HTTP to the API server: one connection pool per TLS identity, shared by every client of a process.

A `Transport` sends raw bytes and returns raw bytes; JSON is the caller's business. Ordinary
requests go over HTTP/1.1 (an aiohttp session bounded by `RestConfig.max_connections`). Watches go
over HTTP/2 where the server offers it (ALPN) and no proxy is configured: the watches of every
identity then share a few connections (`_h2`). Otherwise they fall back to a second HTTP/1.1
session (`max_watch_connections`), because HTTP/1.1 pins a connection per open watch and a shared
limit would let many watches starve every other request.

Transports made with `with_config` share the pools of the transport they came from; a config that
differs only in token or impersonation reuses the same connections. Closing any of them closes the
pools for all of them, so close the one from `create` when the process shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

import aiohttp
from multidict import CIMultiDict
from opentelemetry import trace

from olm_runtime import tracing
from olm_runtime.client import _metrics, _spans, errors
from olm_runtime.client.config import RestConfig

if TYPE_CHECKING:
    from olm_runtime.client import _h2

__all__ = ["Requester", "Transport"]

_READ_BUFFER = 2**21  # a watch line holds a whole object; etcd allows 1.5 MiB objects
_MAX_THROTTLE_WAIT = 30.0
_IDEMPOTENT = frozenset({"GET", "HEAD"})


def ssl_context(config: RestConfig) -> ssl.SSLContext:
    """The TLS context for a config: its CAs, its client certificate, and hostname checks."""
    context = ssl.create_default_context(
        cafile=str(config.ca_file) if config.ca_file else None,
        cadata=config.ca_data.decode() if config.ca_data else None,
    )
    if config.insecure_skip_tls_verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.client_cert_file:
        context.load_cert_chain(
            str(config.client_cert_file), str(config.client_key_file) if config.client_key_file else None
        )
    elif config.client_cert_data and config.client_key_data:
        # The ssl module loads certificates only from files: write them privately and remove at once.
        with tempfile.TemporaryDirectory(prefix="olm-runtime-") as tmp:
            cert, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
            for path, data in ((cert, config.client_cert_data), (key, config.client_key_data)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            context.load_cert_chain(cert, key)
    return context


def _pool_key(config: RestConfig) -> tuple[object, ...]:
    return (
        config.server,
        config.ca_file,
        config.ca_data,
        config.insecure_skip_tls_verify,
        config.client_cert_file,
        config.client_key_file,
        config.client_cert_data,
        config.client_key_data,
        config.max_connections,
        config.max_watch_connections,
    )


class Requester(Protocol):
    """The one method that discovery and token requests need; `Transport` is the real one."""

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> bytes: ...


class _Pool:
    """The sessions (requests, watches) for one TLS identity, created on first use."""

    def __init__(self, config: RestConfig) -> None:
        self._config = config
        self._requests: aiohttp.ClientSession | None = None
        self._watches: aiohttp.ClientSession | None = None
        self._http2: _h2.H2Pool | None = None
        # HTTP/2 needs TLS, and a proxy tunnel is only made by aiohttp; a server that refuses it in
        # the handshake is not asked again.
        self.http2_refused = not config.server.startswith("https:") or config.proxy_url is not None

    def _session(self, limit: int) -> aiohttp.ClientSession:
        tls: ssl.SSLContext | bool = (
            ssl_context(self._config) if self._config.server.startswith("https:") else False
        )
        connector = aiohttp.TCPConnector(limit=limit, limit_per_host=0, ssl=tls)
        return aiohttp.ClientSession(connector=connector, read_bufsize=_READ_BUFFER, auto_decompress=True)

    def requests(self) -> aiohttp.ClientSession:
        if self._requests is None:
            self._requests = self._session(self._config.max_connections)
        return self._requests

    def watches(self) -> aiohttp.ClientSession:
        if self._watches is None:
            self._watches = self._session(self._config.max_watch_connections)
        return self._watches

    @property
    def http2_connections(self) -> int:
        return 0 if self._http2 is None else self._http2.connections

    def http2(self) -> _h2.H2Pool | None:
        """The HTTP/2 connections for watches, or None where watches use HTTP/1.1."""
        if self.http2_refused:
            return None
        if self._http2 is None:
            from olm_runtime.client import _h2  # noqa: PLC0415 (h2 is loaded by the first watch)

            self._http2 = _h2.H2Pool(
                self._config.server, ssl_context(self._config), self._config.tls_server_name
            )
        return self._http2

    async def close(self) -> None:
        for session in (self._requests, self._watches):
            if session is not None:
                await session.close()
        self._requests = self._watches = None
        if self._http2 is not None:
            self._http2.close()
            self._http2 = None


class Transport:
    """Sends requests for one `RestConfig`; see the module docstring for pooling and closing."""

    def __init__(self, config: RestConfig, *, _pools: dict[tuple[object, ...], _Pool] | None = None) -> None:
        self.config = config
        self._pools = {} if _pools is None else _pools
        key = _pool_key(config)
        if key not in self._pools:
            self._pools[key] = _Pool(config)
        self._pool = self._pools[key]
        self._base = config.server.rstrip("/")
        split = urlsplit(config.server)
        self._host = split.netloc
        self._address = (split.hostname or "", split.port or (443 if split.scheme == "https" else 80))

    @classmethod
    async def create(cls, config: RestConfig) -> Transport:
        """A transport with fresh connection pools (created lazily on the first request)."""
        return cls(config)

    def with_config(self, config: RestConfig) -> Transport:
        """A transport for another identity on the same server, sharing connection pools where the
        TLS identity (CAs, client certificate) is the same."""
        return Transport(config, _pools=self._pools)

    @property
    def http2_connections(self) -> int:
        """Open HTTP/2 connections carrying the watches of this TLS identity (every token and
        impersonation on it); 0 where watches use HTTP/1.1."""
        return self._pool.http2_connections

    async def close(self) -> None:
        """Close every connection pool shared with this transport."""
        for pool in self._pools.values():
            await pool.close()

    async def _headers(self, extra: Mapping[str, str] | None, content_type: str | None) -> CIMultiDict[str]:
        headers: CIMultiDict[str] = CIMultiDict()
        headers["Accept"] = "application/json"
        headers["User-Agent"] = self.config.user_agent
        if self.config.token_provider is not None:
            headers["Authorization"] = f"Bearer {await self.config.token_provider.token()}"
        if self.config.impersonate_user:
            headers["Impersonate-User"] = self.config.impersonate_user
            for group in self.config.impersonate_groups:
                headers.add("Impersonate-Group", group)
        if content_type:
            headers["Content-Type"] = content_type
        if extra:
            headers.update(extra)
        return headers

    @contextlib.contextmanager
    def _connection_errors(self, method: str, what: str) -> Iterator[None]:
        """Raise a request that got no HTTP response as `TimeoutError` or `errors.TransportError`
        naming `what`, and count it with `code="<error>"`."""
        try:
            yield
        except (TimeoutError, aiohttp.ClientError, errors.TransportError) as e:
            _metrics.REST_CLIENT.requests.labels("<error>", method, self._host).inc()
            if isinstance(e, TimeoutError):
                raise TimeoutError(f"{what} timed out") from e
            raise errors.TransportError(f"{what}: {e}") from e

    def _should_refresh_token(self, status: int, refreshed: bool) -> bool:
        if status != 401 or refreshed or self.config.token_provider is None:
            return False
        self.config.token_provider.invalidate()
        return True

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> bytes:
        """Send one request and return the response body; statuses >= 400 raise `errors.APIError`.

        A 401 with a token provider is retried once with a fresh token. A GET answered with 429 is
        retried up to `throttle_retries` times after the server's Retry-After (at most 30 s each).
        """
        method = method.upper()
        refreshed, throttled = False, 0
        with self._span(method, path, params) as span:
            while True:
                status, data, response_headers = await self._send(
                    method=method,
                    path=path,
                    params=params,
                    body=body,
                    content_type=content_type,
                    headers=headers,
                    timeout=timeout,
                )
                span.set_attribute("http.response.status_code", status)
                if status < 400:
                    return data
                if self._should_refresh_token(status, refreshed):
                    refreshed = True
                    continue
                error = errors.from_response(status, data, response_headers)
                if (
                    isinstance(error, errors.TooManyRequests)
                    and method in _IDEMPOTENT
                    and throttled < self.config.throttle_retries
                ):
                    throttled += 1
                    wait = 1.0 if error.retry_after is None else error.retry_after
                    await asyncio.sleep(min(wait, _MAX_THROTTLE_WAIT))
                    continue
                span.set_attribute("error.type", str(status))
                raise error

    @contextlib.contextmanager
    def _span(self, method: str, path: str, params: Mapping[str, str] | None) -> Iterator[trace.Span]:
        """A client span for one request, made only inside another span: calls outside any (lease
        renewals, informer lists) would each start a trace of their own and drown the real ones.
        An exception leaving it marks it as failed; `error.type` names a transport failure's class."""
        if not trace.get_current_span().is_recording():
            yield trace.INVALID_SPAN
            return
        call = _spans.describe(method, path, params)
        attributes: dict[str, str | int] = {
            "http.request.method": method,
            "server.address": self._address[0],
            "server.port": self._address[1],
            "url.path": path,
            "k8s.verb": call.verb,
        }
        if call.resource:
            attributes["k8s.resource"] = call.resource
        if call.namespace:
            attributes["k8s.namespace.name"] = call.namespace
        if call.name:
            attributes["k8s.object.name"] = call.name
        with tracing.tracer().start_as_current_span(
            call.span_name, kind=trace.SpanKind.CLIENT, attributes=attributes
        ) as span:
            try:
                yield span
            except (TimeoutError, errors.TransportError) as e:
                span.set_attribute("error.type", type(e).__name__)
                raise

    async def _send(
        self,
        *,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        body: bytes | None,
        content_type: str | None,
        headers: Mapping[str, str] | None,
        timeout: float | None,
    ) -> tuple[int, bytes, Mapping[str, str]]:
        request_headers = await self._headers(headers, content_type)
        client_timeout = aiohttp.ClientTimeout(
            total=timeout if timeout is not None else self.config.timeout,
            sock_connect=self.config.connect_timeout,
        )
        started = time.monotonic()
        with self._connection_errors(method, f"{method} {path}"):
            async with self._pool.requests().request(
                method,
                self._base + path,
                params=params,
                data=body,
                headers=request_headers,
                timeout=client_timeout,
                proxy=self.config.proxy_url,
                server_hostname=self.config.tls_server_name,
            ) as response:
                _metrics.REST_CLIENT.latency.labels(method, self._host).observe(time.monotonic() - started)
                data = await response.read()
                _metrics.REST_CLIENT.requests.labels(str(response.status), method, self._host).inc()
                return response.status, data, response.headers

    def stream(
        self,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """Open a streaming GET (a watch) and iterate its newline-delimited lines.

        Non-200 responses raise the typed error before anything is yielded. `timeout` bounds the
        silence between two reads (`TimeoutError` when exceeded), not the stream's length: pair it
        with the server-side `timeoutSeconds` parameter. `headers` are added to (and override) the
        defaults, e.g. an `Accept` asking for PartialObjectMetadata. The connection is closed on exit.
        """
        return self._stream(path, params, headers, timeout)

    @contextlib.asynccontextmanager
    async def _stream(
        self,
        path: str,
        params: Mapping[str, str] | None,
        extra_headers: Mapping[str, str] | None,
        timeout: float | None,
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        refreshed = False
        while True:
            # The headers (the bearer token among them) are not kept for the watch's lifetime: with
            # thousands of watches that is thousands of copies of a token.
            response = await self._open_stream(
                path, params, await self._headers(extra_headers, None), timeout
            )
            _metrics.REST_CLIENT.requests.labels(str(response.status), "GET", self._host).inc()
            if response.status == 200:
                break
            try:
                data = await response.body(timeout)
            finally:
                response.close()
            if self._should_refresh_token(response.status, refreshed):
                refreshed = True
                continue
            raise errors.from_response(response.status, data, response.headers)
        try:
            yield _Lines(response, path, timeout)
        finally:
            response.close()

    async def _open_stream(
        self, path: str, params: Mapping[str, str] | None, headers: CIMultiDict[str], timeout: float | None
    ) -> _StreamResponse:
        http2 = self._pool.http2()
        if http2 is not None:
            from olm_runtime.client import _h2  # noqa: PLC0415 (loaded already by http2())

            with self._connection_errors("GET", f"GET {path} (watch)"):
                try:
                    return await http2.get(
                        path, params, headers, connect_timeout=self.config.connect_timeout, timeout=timeout
                    )
                except _h2.Http2Refused:
                    self._pool.http2_refused = True
        client_timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self.config.connect_timeout, sock_read=timeout
        )
        with self._connection_errors("GET", f"GET {path} (watch)"):
            response = await self._pool.watches().get(
                self._base + path,
                params=params,
                headers=headers,
                timeout=client_timeout,
                proxy=self.config.proxy_url,
                server_hostname=self.config.tls_server_name,
            )
        return _Http1Response(response)


class _StreamResponse(Protocol):
    """A streaming response over either protocol: `_h2.Stream` or `_Http1Response`."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def read(self, timeout: float | None = None) -> bytes: ...

    async def body(self, timeout: float | None) -> bytes: ...

    def close(self) -> None: ...


class _Http1Response:
    """An aiohttp response read the way `_h2.Stream` is (its read timeout is the session's)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.headers: Mapping[str, str] = response.headers

    async def read(self, timeout: float | None = None) -> bytes:
        try:
            return await self._response.content.readany()
        except TimeoutError:
            raise  # aiohttp's read timeout is a ClientError too
        except aiohttp.ClientError as e:
            raise errors.TransportError(str(e)) from e

    async def body(self, timeout: float | None) -> bytes:
        try:
            return await self._response.read()
        finally:
            self._response.release()

    def close(self) -> None:
        self._response.close()


class _Lines:
    """Newline-delimited lines of a response body, without a limit on line length."""

    def __init__(self, response: _StreamResponse, path: str, timeout: float | None) -> None:
        self._response = response
        self._path = path
        self._timeout = timeout
        self._buffer = bytearray()
        self._start = 0  # first unconsumed byte
        self._scanned = 0  # bytes known to hold no newline

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> bytes:
        buffer = self._buffer
        while True:
            newline = buffer.find(b"\n", max(self._start, self._scanned))
            if newline >= 0:
                line = bytes(buffer[self._start : newline])
                self._start = self._scanned = newline + 1
                if line.strip():
                    return line
                continue
            del buffer[: self._start]
            self._start, self._scanned = 0, len(buffer)
            try:
                chunk = await self._response.read(self._timeout)
            except TimeoutError as e:
                raise TimeoutError(f"watch {self._path}: no data within the read timeout") from e
            except errors.TransportError as e:
                raise errors.TransportError(f"watch {self._path}: {e}") from e
            if not chunk:
                if buffer.strip():
                    line = bytes(buffer)
                    buffer.clear()
                    self._scanned = 0
                    return line
                raise StopAsyncIteration
            buffer += chunk
