"""Hostile HTTP requests to a real catalogd: each gets a clear status, and catalogd keeps serving.

The corpus is a table: a raw request (sent byte for byte over TLS, so nothing in a client library
cleans it up first), its category and the status it must get. After every case a normal request
must still be answered with the catalog, on a new connection. `{name}` in a request is the
catalog the module serves. What each answer means, and the limits behind them, is in
`docs/catalogd/content-server-limits.md`; the two slow-client cases and the TLS version checks
have their own tests below the table.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from e2e.catalogd.conftest import Catalogs, fetch_all, source_metas, write_catalog
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import cluster_catalog, push_catalog
from olm_testkit.images.registry import RegistryClient as PushClient
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess

IDLE_TIMEOUT = 15.0
"""`ServerOptions.idle_timeout`: a request head must be complete this long after the handshake."""
TLS_HANDSHAKE_TIMEOUT = 10.0
"""`ServerOptions.tls_handshake_timeout`."""
SLACK = 10.0
"""Added to each bound before a test calls it broken (a loaded machine is slow, never early)."""

ALL = b"/catalogs/{name}/api/v1/all"


def _get(path: bytes = ALL, *headers: bytes, version: bytes = b"HTTP/1.1") -> bytes:
    return (
        b"GET "
        + path
        + b" "
        + version
        + b"\r\nHost: catalogd\r\n"
        + b"".join(h + b"\r\n" for h in headers)
        + b"\r\n"
    )


@dataclass(frozen=True)
class Case:
    category: str
    request: bytes
    status: int


def _cases(category: str, *cases: tuple[str, int, bytes]) -> list[Any]:
    """`(id, status, request)` rows of one category as pytest params."""
    return [
        pytest.param(Case(category, request, status), id=f"{category}-{name}")
        for name, status, request in cases
    ]


CORPUS = [
    # --- path traversal: never a file outside the storage root
    *_cases(
        "traversal",
        ("dot-dot-segments", 404, _get(b"/catalogs/../../../../etc/passwd")),
        ("encoded-dot-dot", 400, _get(b"/catalogs/%2e%2e/api/v1/all")),
        ("encoded-dot-dot-slash", 400, _get(b"/catalogs/%2e%2e%2f%2e%2e%2fetc/api/v1/all")),
        ("double-encoded-dot-dot", 400, _get(b"/catalogs/%252e%252e/api/v1/all")),
        ("encoded-slash-in-name", 400, _get(b"/catalogs/a%2fb/api/v1/all")),
        ("backslashes", 400, _get(b"/catalogs/..\\..\\etc/api/v1/all")),
        ("encoded-backslashes", 400, _get(b"/catalogs/%5c..%5cetc/api/v1/all")),
        ("overlong-utf8-dots", 400, _get(b"/catalogs/%c0%ae%c0%ae/api/v1/all")),
        ("encoded-nul", 400, _get(b"/catalogs/{name}%00/api/v1/all")),
        ("raw-nul", 400, _get(b"/catalogs/{name}\x00/api/v1/all")),
        ("absolute-path", 404, _get(b"/etc/passwd")),
        ("double-slash-path", 404, _get(b"//etc/passwd")),
        ("file-url-target", 400, _get(b"file:///etc/passwd")),
        ("dot-dot-after-name", 404, _get(b"/catalogs/{name}/api/v1/../../../{name}/all.jsonl")),
    ),
    # --- no directory listing
    *_cases(
        "directory",
        ("root", 404, _get(b"/")),
        ("prefix", 404, _get(b"/catalogs")),
        ("prefix-slash", 404, _get(b"/catalogs/")),
        ("catalog-directory", 404, _get(b"/catalogs/{name}/")),
        ("api-directory", 404, _get(b"/catalogs/{name}/api/v1/")),
        ("all-as-directory", 404, _get(b"/catalogs/{name}/api/v1/all/")),
        ("storage-layout-file", 404, _get(b"/catalogs/{name}/current/all.jsonl")),
    ),
    # --- Range: syntactically bad or several ranges -> whole body (200); unsatisfiable -> 416
    *_cases(
        "range",
        ("two-ranges", 200, _get(ALL, b"Range: bytes=0-1,5-6")),
        ("500-ranges", 200, _get(ALL, b"Range: bytes=" + b",".join(b"%d-%d" % (i, i) for i in range(500)))),
        ("inverted-range", 200, _get(ALL, b"Range: bytes=9-2")),
        ("start-beyond-end", 416, _get(ALL, b"Range: bytes=999999999-")),
        ("empty-suffix", 416, _get(ALL, b"Range: bytes=-0")),
        ("400-digit-end", 206, _get(ALL, b"Range: bytes=0-" + b"9" * 400)),
        ("double-minus", 200, _get(ALL, b"Range: bytes=--5")),
        ("empty-range-set", 200, _get(ALL, b"Range: bytes=")),
        ("unknown-unit", 200, _get(ALL, b"Range: pages=1-2")),
        ("garbage-range", 200, _get(ALL, b"Range: \xff\xfe garbage")),
        ("garbage-if-range", 200, _get(ALL, b"Range: bytes=0-1", b"If-Range: not a validator")),
    ),
    # --- conditional headers: garbage never fails the request
    *_cases(
        "conditional",
        ("unterminated-etag", 200, _get(ALL, b'If-None-Match: "unterminated')),
        ("if-none-match-star", 304, _get(ALL, b"If-None-Match: *")),
        ("garbage-date", 200, _get(ALL, b"If-Modified-Since: yesterday-ish")),
        ("date-overflowing-year", 200, _get(ALL, b"If-Modified-Since: Fri, 31 Dec 99999999999 23:59:59 GMT")),
        ("garbage-unmodified-since", 200, _get(ALL, b"If-Unmodified-Since: 0")),
        ("garbage-if-match", 412, _get(ALL, b"If-Match: garbage")),
        ("garbage-accept-encoding", 200, _get(ALL, b"Accept-Encoding: gzip;q=abc, *;q=\xff")),
        ("garbage-traceparent", 200, _get(ALL, b"traceparent: zz-not-a-trace")),
    ),
    # --- size limits
    *_cases(
        "limits",
        ("20k-url", 400, _get(b"/catalogs/" + b"a" * 20_000 + b"/api/v1/all")),
        ("9k-query", 400, _get(b"/catalogs/{name}/api/v1/metas?schema=" + b"a" * 9000)),
        ("20k-header-value", 400, _get(ALL, b"X-Big: " + b"a" * 20_000)),
        ("9k-header-name", 400, _get(ALL, b"X-" + b"a" * 9000 + b": y")),
        ("300-headers", 400, _get(ALL, *(b"X-%d: y" % i for i in range(300)))),
        ("254-char-name", 400, _get(b"/catalogs/" + b"a" * 254 + b"/api/v1/all")),
    ),
    # --- bodies and framing: no body on GET/HEAD, no smuggling
    *_cases(
        "framing",
        ("get-with-body", 400, _get(ALL, b"Content-Length: 5")[:-2] + b"\r\nhello"),
        ("get-chunked-body", 400, _get(ALL, b"Transfer-Encoding: chunked") + b"5\r\nhello\r\n0\r\n\r\n"),
        ("get-huge-content-length", 400, _get(ALL, b"Content-Length: 99999999999999")),
        ("head-with-body", 400, b"HEAD " + ALL + b" HTTP/1.1\r\nHost: c\r\nContent-Length: 3\r\n\r\nabc"),
        (
            "length-and-chunked",
            400,
            _get(ALL, b"Content-Length: 5", b"Transfer-Encoding: chunked") + b"0\r\n\r\n",
        ),
        ("negative-length", 400, _get(ALL, b"Content-Length: -1")),
        ("two-lengths", 400, _get(ALL, b"Content-Length: 1", b"Content-Length: 2") + b"ab"),
        ("unusual-transfer-coding", 400, _get(ALL, b"Transfer-Encoding: gzip, chunked") + b"0\r\n\r\n"),
    ),
    # --- methods and malformed syntax
    *_cases(
        "syntax",
        ("post", 405, b"POST " + ALL + b" HTTP/1.1\r\nHost: c\r\nContent-Length: 2\r\n\r\n{}"),
        ("trace", 405, b"TRACE " + ALL + b" HTTP/1.1\r\nHost: c\r\n\r\n"),
        ("unknown-method", 400, b"FOO " + ALL + b" HTTP/1.1\r\nHost: c\r\n\r\n"),
        ("unknown-version", 400, _get(version=b"HTTP/9.9")),
        ("no-host", 400, b"GET " + ALL + b" HTTP/1.1\r\n\r\n"),
        ("header-without-colon", 400, _get(ALL, b"Broken header")),
        ("obsolete-line-folding", 400, _get(ALL, b"X-A: a", b" folded")),
        ("space-before-colon", 400, _get(ALL, b"Host : c")),
        ("bare-newlines", 400, b"GET " + ALL + b" HTTP/1.1\nHost: c\n\n"),
        ("binary-garbage", 400, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 40 + b"\r\n\r\n"),
        ("raw-utf8-in-path", 400, b"GET /catalogs/t\xc3\xa9st/api/v1/all HTTP/1.1\r\nHost: c\r\n\r\n"),
        ("uppercase-name", 400, _get(b"/catalogs/{NAME}/api/v1/all")),
    ),
    # --- query parameters of metas
    *_cases(
        "query",
        ("repeated-parameter", 400, _get(b"/catalogs/{name}/api/v1/metas?schema=a&schema=b")),
        ("unknown-parameter", 400, _get(b"/catalogs/{name}/api/v1/metas?path=../../etc")),
        ("undecodable-value", 200, _get(b"/catalogs/{name}/api/v1/metas?schema=%ff%fe")),
    ),
]

CASES = len(CORPUS)
"""How many cases the corpus holds (the corpus table of the fuzzing page counts them)."""
ACCEPTED = [case.id for case in CORPUS if case.values[0].status < 400]
"""The cases answered with catalog content (200, 206, 304); every other one is refused with a 4xx."""


@dataclass(frozen=True)
class Served:
    catalogd: CatalogdProcess
    name: str
    metas: list[object]
    client: ssl.SSLContext
    ca_file: Path


@pytest.fixture(scope="module")
async def served(
    *,
    catalogd: CatalogdProcess,
    kube: Client,
    registry: Registry,
    pusher: PushClient,
    control_plane: ControlPlane,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Served]:
    """One catalog served for the whole corpus."""
    source = write_catalog(tmp_path_factory.mktemp("hostile") / "fbc", "hostile-pkg", ["1.0.0", "1.1.0"])
    name = unique("hostile")
    ref = push_catalog(pusher, source, f"{registry.host}/{unique('e2e/hostile')}:v1")
    catalogs = Catalogs(kube)
    await catalogs.create(cluster_catalog(name, ref))
    try:
        await catalogs.wait_serving(name, ref)
        context = ssl.create_default_context(cafile=str(control_plane.ca_file))
        yield Served(catalogd, name, source_metas(source), context, control_plane.ca_file)
    finally:
        await catalogs.delete_all()


async def _exchange(served: Served, request: bytes) -> int:
    """Send `request` as is on a new TLS connection; the status code of the answer."""
    host, port = "127.0.0.1", served.catalogd.ports["catalogs"]
    reader, writer = await asyncio.open_connection(host, port, ssl=served.client)
    try:
        writer.write(request)
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 30)
    finally:
        writer.close()
    version, code, *_ = status_line.split(b" ", 2)
    assert version in (b"HTTP/1.0", b"HTTP/1.1"), status_line
    return int(code)


@pytest.mark.parametrize("case", CORPUS)
async def test_hostile_request_gets_a_clear_status_and_catalogd_keeps_serving(
    served: Served, case: Case
) -> None:
    request = case.request.replace(b"{name}", served.name.encode()).replace(
        b"{NAME}", served.name.upper().encode()
    )
    assert await _exchange(served, request) == case.status
    normal = await fetch_all(served.client, f"{served.catalogd.catalogs_url}/{served.name}")
    assert normal == (200, served.metas)


def test_the_corpus_is_large_enough_and_named() -> None:
    categories = {param.values[0].category for param in CORPUS}
    assert len(CORPUS) >= 30
    assert categories == {
        "traversal",
        "directory",
        "range",
        "conditional",
        "limits",
        "framing",
        "syntax",
        "query",
    }


async def _closed_by_server(reader: asyncio.StreamReader, deadline: float) -> float:
    """Seconds until the server closed the connection (reads EOF); fails after `deadline`."""
    started = time.monotonic()
    while await asyncio.wait_for(reader.read(1024), deadline):
        pass
    return time.monotonic() - started


async def test_a_slowloris_client_is_cut_off_within_the_idle_timeout(served: Served) -> None:
    port = served.catalogd.ports["catalogs"]
    reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=served.client)
    writer.write(b"GET " + ALL.replace(b"{name}", served.name.encode()) + b" HTTP/1.1\r\nHost: c\r\n")
    await writer.drain()

    async def drip() -> None:  # one header byte a second, never finishing the head
        while not writer.is_closing():
            writer.write(b"X")
            await writer.drain()
            await asyncio.sleep(1)

    dripping = asyncio.create_task(drip())
    try:
        held = await _closed_by_server(reader, IDLE_TIMEOUT + SLACK)
    finally:
        dripping.cancel()
        writer.close()
    assert held <= IDLE_TIMEOUT + SLACK
    assert await fetch_all(served.client, f"{served.catalogd.catalogs_url}/{served.name}") == (
        200,
        served.metas,
    )


async def test_a_client_that_never_finishes_the_handshake_is_cut_off(served: Served) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", served.catalogd.ports["catalogs"])
    writer.write(b"\x16\x03\x01")  # the first bytes of a ClientHello, then nothing
    try:
        held = await _closed_by_server(reader, TLS_HANDSHAKE_TIMEOUT + SLACK)
    finally:
        writer.close()
    assert held <= TLS_HANDSHAKE_TIMEOUT + SLACK


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1:DeprecationWarning")
async def test_tls_below_1_2_is_refused_and_1_2_and_1_3_work(served: Served) -> None:
    port = served.catalogd.ports["catalogs"]
    old = ssl.create_default_context(cafile=str(served.ca_file))
    old.set_ciphers("DEFAULT:@SECLEVEL=0")  # this client would speak TLS 1.1; the server must not
    old.minimum_version = ssl.TLSVersion.TLSv1
    old.maximum_version = ssl.TLSVersion.TLSv1_1
    with pytest.raises((ssl.SSLError, ConnectionResetError)):
        await asyncio.open_connection("127.0.0.1", port, ssl=old)
    for version, name in ((ssl.TLSVersion.TLSv1_2, "TLSv1.2"), (ssl.TLSVersion.TLSv1_3, "TLSv1.3")):
        context = ssl.create_default_context(cafile=str(served.ca_file))
        context.minimum_version = context.maximum_version = version
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
        assert writer.get_extra_info("ssl_object").version() == name
        writer.close()
