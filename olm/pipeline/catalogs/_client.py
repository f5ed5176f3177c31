"""The HTTPS client and its per-(catalog, digest, package) cache."""

from __future__ import annotations

import asyncio
import contextlib
import os
import ssl
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import aiohttp
import orjson
from opentelemetry import trace

from olm import oci
from olm.api import conditions as api
from olm.compat import httpproxy
from olm.pipeline.catalogs._content import PackageContent, parse_lines, wanted
from olm.pipeline.catalogs._errors import (
    CatalogNotServing,
    CatalogUnreachable,
    MalformedCatalog,
)
from olm_runtime import conditions, tracing

__all__ = ["CatalogClient", "CatalogRef", "ClientOptions", "Statistics"]

_UNREACHABLE = (aiohttp.ClientError, TimeoutError, ssl.SSLError, OSError, oci.TLSVerificationFailed)
"""Errors that mean catalogd could not be reached (or not trusted), as opposed to a bad answer."""
_FALLBACK_STATUSES = (400, 404)


@dataclass(frozen=True, kw_only=True)
class CatalogRef:
    """Where one version of a ClusterCatalog is served."""

    name: str
    """The ClusterCatalog's name."""
    digest: str
    """The resolved image reference (by digest) of the version being served; the cache key."""
    base_url: str
    """`status.urls.base`, such as `https://catalogd.olmv1-system.svc/catalogs/operatorhubio`."""

    @classmethod
    def from_cluster_catalog(cls, catalog: Mapping[str, Any]) -> CatalogRef:
        """Read a ClusterCatalog (as a dict); raises `CatalogNotServing` unless it serves content.

        Serving means condition `Serving=True`, a `status.urls.base` and a resolved image ref.
        """
        name = str(catalog.get("metadata", {}).get("name", ""))
        status = catalog.get("status") or {}
        if not conditions.is_true(status.get("conditions") or (), api.TYPE_SERVING):
            raise CatalogNotServing(name, "condition Serving is not True")
        base = (status.get("urls") or {}).get("base") or ""
        image = ((status.get("resolvedSource") or {}).get("image") or {}).get("ref") or ""
        if not base or not image:
            raise CatalogNotServing(name, "status has no content URL or resolved image yet")
        return cls(name=name, digest=image, base_url=base)


@dataclass(frozen=True, kw_only=True)
class ClientOptions:
    """How the client connects and how much it keeps."""

    ca_file: Path | None = None
    """A PEM bundle of CAs trusted for catalogd's certificate besides the system's."""
    ca_dir: Path | None = None
    """A directory of PEM bundles trusted too (`--catalogd-cas-dir`), re-read when its files change:
    the next connection uses what they hold then (`oci.TrustStore`)."""
    proxies: httpproxy.Proxies = field(default_factory=httpproxy.Proxies)
    """The HTTP(S) proxy of each request (operator-controller reads `HTTPS_PROXY`/`NO_PROXY` from
    its environment); a refusing proxy is `CatalogUnreachable` naming it. Default: none."""
    connect_timeout: float = 10.0
    """Seconds to establish a connection (TCP and TLS)."""
    read_timeout: float = 60.0
    """Seconds the server may go without sending a byte; a slow but moving transfer never trips it."""
    total_timeout: float = 600.0
    """Seconds one request may take in all: sized for 100+ MB `all` downloads on slow links."""
    cache_max_bytes: int = 256 << 20
    """Approximate bytes of response bodies kept in memory; least recently used packages go first."""
    bundle_properties: frozenset[str] | None = None
    """The property types cached bundles keep (`parse_lines`); None keeps all of them."""
    chunk_bytes: int = 1 << 20
    """Bytes read per step when streaming `all`; filtering of each step runs in a worker thread."""


@dataclass
class Statistics:
    """Counters for metrics and tests."""

    requests: int = 0
    """HTTP requests sent."""
    not_modified: int = 0
    """Requests answered 304 (content reused from an older digest)."""
    hits: int = 0
    """`get_package` calls answered from memory without a request."""
    misses: int = 0
    """`get_package` calls that sent requests (revalidations answered 304 included)."""
    fetched_bytes: int = 0
    """Bytes of response bodies received, after gzip decoding."""
    fallbacks: int = 0
    """Packages read from `all` because `metas` was not supported."""
    cached_bytes: int = 0
    """Current size of the cache."""


@dataclass(frozen=True)
class _Entry:
    content: PackageContent
    etags: tuple[str, str]
    """ETags of the two `metas` responses; empty strings when read from `all`."""
    cost: int


_Key = tuple[str, str, str]


class CatalogClient:
    """Reads packages of catalogs over HTTPS; one per process, shared by reconciles.

    `get_package` sends `metas?package=<p>` (channels, bundles and the package's
    `olm.deprecations`) and `metas?schema=olm.package&name=<p>`; a server without `metas` (404 or
    400) is read through `all`, filtered while streaming. Results are cached per (catalog, digest,
    package): the same digest is never fetched twice while cached, and after a digest change the
    old responses' ETags are sent in `If-None-Match`, so unchanged content costs a 304 and no
    parsing. Concurrent calls for the same key share one fetch. Per package only the newest digest
    is kept; the memory bound evicts the rest.
    """

    def __init__(self, options: ClientOptions, *, session: aiohttp.ClientSession | None = None) -> None:
        self.options = options
        self._session = session
        self._owns_session = session is None
        self._cache: OrderedDict[_Key, _Entry] = OrderedDict()
        self._inflight: dict[_Key, asyncio.Future[PackageContent]] = {}
        self._stats = Statistics()
        files = (options.ca_file,) if options.ca_file is not None else ()
        self._trust_store = oci.TrustStore(files, options.ca_dir)

    def statistics(self) -> Statistics:
        """A snapshot of the counters."""
        return Statistics(**{**self._stats.__dict__, "cached_bytes": self._cached_bytes()})

    async def close(self) -> None:
        """Close the HTTP session if the client created it."""
        if self._session is not None and self._owns_session:
            await self._session.close()
        self._session = None

    def forget(self, catalog: str) -> None:
        """Drop everything cached for `catalog` (call when the ClusterCatalog is deleted)."""
        for key in [k for k in self._cache if k[0] == catalog]:
            del self._cache[key]

    async def get_package(self, ref: CatalogRef, package: str) -> PackageContent:
        """The content of `package` in the catalog version `ref` (empty content when absent).

        Raises `CatalogNotServing`, `CatalogUnreachable` or `MalformedCatalog`.
        """
        key = (ref.name, ref.digest, package)
        entry = self._cache.get(key)
        if entry is not None:
            self._cache.move_to_end(key)
            self._stats.hits += 1
            return entry.content
        while (pending := self._inflight.get(key)) is not None:
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not pending.cancelled() or (task is not None and task.cancelling()):
                    raise
                # the caller that was fetching was cancelled, not this one: fetch again
        future: asyncio.Future[PackageContent] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        self._stats.misses += 1
        try:
            content = await self._fetch(ref, package)
        except Exception as err:
            future.set_exception(err)
            future.exception()  # retrieved: waiters re-raise it, nobody else needs to
            raise
        except BaseException:
            future.cancel()
            raise
        else:
            future.set_result(content)
            return content
        finally:
            del self._inflight[key]

    async def package_names(self, ref: CatalogRef) -> frozenset[str] | None:
        """The names of every package in the catalog version `ref` (one small `metas` query), or
        None when the server cannot answer it (no `metas` support). Not cached: callers ask once
        per digest. Raises `CatalogNotServing`, `CatalogUnreachable`."""
        url = ref.base_url.rstrip("/") + "/api/v1/metas?" + urlencode({"schema": "olm.package"})
        status, _, body = await self._get(ref, url, "")
        if status != 200:
            return None
        found: set[str] = set()
        for line in body.splitlines():
            if not line.strip():
                continue
            try:
                meta = orjson.loads(line)
            except orjson.JSONDecodeError as err:
                raise MalformedCatalog(ref.name, f"unreadable olm.package line: {err}") from None
            if isinstance(meta, dict) and isinstance(meta.get("name"), str):
                found.add(meta["name"])
        return frozenset(found)

    async def _fetch(self, ref: CatalogRef, package: str) -> PackageContent:
        previous = self._previous(ref.name, package)
        etags = previous.etags if previous is not None else ("", "")
        base = ref.base_url.rstrip("/") + "/api/v1/metas?"
        urls = (
            base + urlencode({"package": package}),
            base + urlencode({"schema": "olm.package", "name": package}),
        )
        results = await asyncio.gather(
            *(self._get(ref, url, tag) for url, tag in zip(urls, etags, strict=True))
        )
        if any(status in _FALLBACK_STATUSES for status, _, _ in results):
            content, size = await self._from_all(ref, package)
            self._store(ref, package, _Entry(content, ("", ""), size))
            return content
        if previous is not None and all(status == 304 for status, _, _ in results):
            self._stats.not_modified += 2
            self._store(ref, package, previous)
            return previous.content
        fresh = list(results)
        for index, (status, _, _) in enumerate(results):
            if status == 304:  # only one of two unchanged: fetch it whole rather than mix versions
                fresh[index] = await self._get(ref, urls[index], "")
                if fresh[index][0] != 200:
                    raise CatalogUnreachable(ref.name, f"catalog {ref.name!r} changed while being read")
        bodies = [body for _, _, body in fresh]
        lines = [line for body in bodies for line in body.splitlines()]
        content = await asyncio.to_thread(self._parse, ref.name, package, lines)
        tags = (fresh[0][1], fresh[1][1])
        self._store(ref, package, _Entry(content, tags, sum(len(b) for b in bodies)))
        return content

    async def _get(self, ref: CatalogRef, url: str, etag: str) -> tuple[int, str, bytes]:
        headers = {"Accept-Encoding": "gzip", "Accept": "application/jsonl"}
        if etag:
            headers["If-None-Match"] = etag
        async with self._request(ref, url, headers) as response:
            if response.status in (304, *_FALLBACK_STATUSES):
                return response.status, response.headers.get("ETag", ""), b""
            _check_status(ref.name, response.status, await _excerpt(response))
            _check_digest(ref, response.headers.get(DIGEST_HEADER))
            body = await response.read()
            self._stats.fetched_bytes += len(body)
            return response.status, response.headers.get("ETag", ""), body

    async def _from_all(self, ref: CatalogRef, package: str) -> tuple[PackageContent, int]:
        self._stats.fallbacks += 1
        url = ref.base_url.rstrip("/") + "/api/v1/all"
        kept: list[bytes] = []
        async with self._request(ref, url, {"Accept-Encoding": "gzip"}) as response:
            if response.status == 404:
                raise CatalogNotServing(ref.name, "the content server answered 404")
            _check_status(ref.name, response.status, await _excerpt(response))
            _check_digest(ref, response.headers.get(DIGEST_HEADER))
            tail = b""
            async for chunk in response.content.iter_chunked(self.options.chunk_bytes):
                self._stats.fetched_bytes += len(chunk)
                lines = (tail + chunk).split(b"\n")
                tail = lines.pop()
                kept.extend(await asyncio.to_thread(_select, lines, package))
            kept.extend(_select([tail], package))
        content = await asyncio.to_thread(self._parse, ref.name, package, kept)
        return content, sum(map(len, kept))

    @contextlib.asynccontextmanager
    async def _request(
        self, ref: CatalogRef, url: str, headers: dict[str, str]
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """One traced GET to catalogd; a connection failure, also one while the caller reads the
        body, is raised as `CatalogUnreachable`."""
        session = self._session_or_create()
        self._stats.requests += 1
        proxy = self.options.proxies.for_url(url)
        with _span(ref, url, headers) as span:
            try:
                async with session.get(
                    url, headers=headers, timeout=self._timeout(), ssl=self._trust(), proxy=proxy
                ) as response:
                    span.set_attribute("http.response.status_code", response.status)
                    yield response
            except _UNREACHABLE as err:
                span.set_attribute("error.type", type(err).__name__)
                failure = oci.proxy_failure(err, proxy, url)
                message = (
                    _unreachable(ref.name, err, _server(url), self.options)
                    if failure is None
                    else _through(ref.name, failure)
                )
                raise CatalogUnreachable(ref.name, message) from err

    def _parse(self, catalog: str, package: str, lines: list[bytes]) -> PackageContent:
        return parse_lines(catalog, package, lines, bundle_properties=self.options.bundle_properties)

    def _previous(self, catalog: str, package: str) -> _Entry | None:
        for (name, _, pkg), entry in reversed(self._cache.items()):
            if name == catalog and pkg == package:
                return entry
        return None

    def _store(self, ref: CatalogRef, package: str, entry: _Entry) -> None:
        for key in [k for k in self._cache if k[0] == ref.name and k[2] == package and k[1] != ref.digest]:
            del self._cache[key]  # per package, only the newest digest is kept
        self._cache[(ref.name, ref.digest, package)] = entry
        self._cache.move_to_end((ref.name, ref.digest, package))
        while len(self._cache) > 1 and self._cached_bytes() > self.options.cache_max_bytes:
            self._cache.popitem(last=False)

    def _cached_bytes(self) -> int:
        return sum(entry.cost for entry in self._cache.values())

    def _timeout(self) -> aiohttp.ClientTimeout:
        return aiohttp.ClientTimeout(
            total=self.options.total_timeout,
            sock_connect=self.options.connect_timeout,
            sock_read=self.options.read_timeout,
        )

    def _session_or_create(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession()
            self._owns_session = True
        return self._session

    def _trust(self) -> ssl.SSLContext:
        """The SSL context of the next request: connections are pooled by context, so a changed CA
        bundle is used from the next connection on."""
        return self._trust_store.context()


@contextlib.contextmanager
def _span(ref: CatalogRef, url: str, headers: dict[str, str]) -> Iterator[trace.Span]:
    """A client span for one request to catalogd, whose `traceparent` goes out in `headers` so
    catalogd's server span for it is this span's child: one install is one trace."""
    parts = urlsplit(url)
    endpoint = parts.path.rsplit("/", 1)[-1]
    attributes: dict[str, str | int] = {
        "http.request.method": "GET",
        "server.address": parts.hostname or "",
        "server.port": parts.port or 443,
        "url.full": url,
        "olm.catalog": ref.name,
    }
    with tracing.span(f"GET catalogd {endpoint}", attributes, kind=trace.SpanKind.CLIENT) as span:
        tracing.inject(headers)
        yield span


def _select(lines: list[bytes], package: str) -> list[bytes]:
    """The lines of `package`; a cheap substring test skips parsing most other lines."""
    needle = package.encode()
    kept = []
    for line in lines:
        if needle not in line or not line.strip():
            continue
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            kept.append(line)  # let parse_lines report it with context
            continue
        if isinstance(obj, dict) and wanted(obj, package):
            kept.append(line)
    return kept


async def _excerpt(response: aiohttp.ClientResponse) -> str:
    if response.status < 300:
        return ""
    text = (await response.content.read(512)).decode("utf-8", "replace").strip()
    return text


def _check_status(catalog: str, status: int, excerpt: str) -> None:
    if status == 200:
        return
    detail = f"content server answered HTTP {status}" + (f": {excerpt}" if excerpt else "")
    if status == 404:
        raise CatalogNotServing(catalog, detail)
    if status >= 500 or status in (408, 429):
        raise CatalogUnreachable(catalog, f"catalog {catalog!r}: {detail}")
    raise MalformedCatalog(catalog, detail)


def _unreachable(catalog: str, err: BaseException, server: str, options: ClientOptions) -> str:
    return f"catalog {catalog!r} content server unreachable: {describe_failure(err, server, options)}"


def describe_failure(err: BaseException, server: str, options: ClientOptions) -> str:
    """Why `server` (host:port) gave no answer, in words that stay the same from one attempt to the
    next: the text reaches a ClusterExtension's condition, so no object addresses (aiohttp's own
    messages print the SSL context's) and no source ports, or every retry would rewrite it."""
    if isinstance(err, aiohttp.ClientConnectorDNSError):
        return f"the name {err.host} did not resolve ({_strerror(err)})"
    if isinstance(err, aiohttp.ClientConnectorCertificateError):
        return f"the TLS certificate of {server} is not trusted ({err.certificate_error})"
    if isinstance(err, aiohttp.ClientConnectorError):
        return f"cannot connect to {server} ({_strerror(err)})"
    if isinstance(err, aiohttp.ConnectionTimeoutError):
        return f"connecting to {server} timed out after {options.connect_timeout:g}s"
    if isinstance(err, aiohttp.SocketTimeoutError):
        return f"{server} sent nothing for {options.read_timeout:g}s"
    if isinstance(err, TimeoutError):
        return f"{server} did not answer in full within {options.total_timeout:g}s"
    if isinstance(err, aiohttp.ServerDisconnectedError):
        return f"{server} closed the connection before answering"
    return f"{server}: {type(err).__name__}: {err}".rstrip(": ")


def _strerror(err: aiohttp.ClientConnectorError) -> str:
    # asyncio's strerror for a refused connect is "Connect call failed ('10.0.0.1', 443)"; the
    # errno says it plainly. Resolver failures carry no errno, only the resolver's words.
    if err.os_error.errno and err.os_error.errno > 0:
        return os.strerror(err.os_error.errno)
    return err.strerror or type(err.os_error).__name__


def _server(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


def _through(catalog: str, failure: str) -> str:
    return f"catalog {catalog!r} content server unreachable: {failure}"


DIGEST_HEADER = "Olm-Catalog-Digest"
"""catalogd names the digest a response's content comes from (`olm.catalogd.server.DIGEST_HEADER`;
this package does not import catalogd, so the name is repeated)."""


def _check_digest(ref: CatalogRef, served: str | None) -> None:
    """A replica still serving an older digest than the catalog's status names must not have its
    answer cached under the new digest: fail retryably instead. Servers that do not say which
    digest they serve are trusted."""
    expected = ref.digest.rpartition("@")[2]
    if served and served != expected:
        raise CatalogUnreachable(
            ref.name, f"catalog {ref.name!r} is still serving {served}, not yet {expected}; retrying"
        )
