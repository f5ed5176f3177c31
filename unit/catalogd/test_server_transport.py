"""The server's transport: TLS only (1.2+, HTTP/1.1), certificate reload (the runtime's
`CertWatcher`), large bodies, stalled clients."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import structlog
from cryptography import x509

from olm import fbc
from olm.catalogd.storage import Storage
from unit.catalogd.serving import Served, serving
from unit.fbc.bigcatalog import write_catalog

DIGEST = "sha256:" + "b" * 64


async def _peer_serial(served: Served) -> int:
    _, writer = await asyncio.open_connection("127.0.0.1", served.server.port, ssl=served.client_context())
    sslobj = writer.get_extra_info("ssl_object")
    der = sslobj.getpeercert(binary_form=True)
    writer.close()
    return int(x509.load_der_x509_certificate(der).serial_number)


@pytest.fixture
async def big(tmp_path: Path) -> Storage:
    root = tmp_path / "fbc"
    write_catalog(root, packages=12, bundles_per_package=40, bundle_bytes=40_000)  # about 20 MB
    storage = Storage(tmp_path / "store", gzip_level=1)
    await storage.store("big", DIGEST, fbc.checked(fbc.iter_metas(root)))
    return storage


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1:DeprecationWarning")
async def test_tls_below_1_2_is_refused(tmp_path: Path) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path) as served:
        context = served.client_context()
        context.set_ciphers("DEFAULT:@SECLEVEL=0")  # the client would speak TLS 1.1; the server must not
        context.minimum_version = ssl.TLSVersion.TLSv1
        context.maximum_version = ssl.TLSVersion.TLSv1_1
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            await asyncio.open_connection("127.0.0.1", served.server.port, ssl=context)
        for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
            context = served.client_context()
            context.minimum_version = context.maximum_version = version
            _, writer = await asyncio.open_connection("127.0.0.1", served.server.port, ssl=context)
            assert writer.get_extra_info("ssl_object").version() in ("TLSv1.2", "TLSv1.3")
            writer.close()


async def test_alpn_offers_http_1_1_only(tmp_path: Path) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path) as served:
        context = served.client_context()
        context.set_alpn_protocols(["h2", "http/1.1"])
        _, writer = await asyncio.open_connection("127.0.0.1", served.server.port, ssl=context)
        assert writer.get_extra_info("ssl_object").selected_alpn_protocol() == "http/1.1"
        writer.close()


async def test_plain_http_gets_no_answer(tmp_path: Path) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path) as served, aiohttp.ClientSession() as plain:
        with pytest.raises(aiohttp.ClientError):
            async with plain.get(f"http://127.0.0.1:{served.server.port}/catalogs/x/api/v1/all") as response:
                await response.read()


async def test_rotated_certificate_is_used_by_new_connections(tmp_path: Path) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path) as served:
        first = await _peer_serial(served)
        assert not served.server.certificates.load()  # nothing changed yet
        rotated = served.ca.issue("rotated", common_name="catalogd", hosts=["127.0.0.1"])
        served.pair.cert_file.write_bytes(rotated.cert_file.read_bytes())
        served.pair.key_file.write_bytes(rotated.key_file.read_bytes())
        assert served.server.certificates.load()
        second = await _peer_serial(served)
        assert second != first
        assert second == x509.load_pem_x509_certificate(rotated.cert_file.read_bytes()).serial_number


async def test_half_written_certificate_keeps_the_old_one(tmp_path: Path) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path) as served:
        first = await _peer_serial(served)
        rotated = served.ca.issue("rotated", common_name="catalogd", hosts=["127.0.0.1"])
        served.pair.cert_file.write_bytes(rotated.cert_file.read_bytes())  # the key is not written yet
        with pytest.raises(ssl.SSLError):
            served.server.certificates.load()
        assert await _peer_serial(served) == first


async def test_large_catalog_streams_intact(tmp_path: Path, big: Storage) -> None:
    stored = big.get("big")
    assert stored is not None
    assert stored.size > 15_000_000
    expected = hashlib.sha256(stored.all_path.read_bytes()).hexdigest()
    async with serving(big, tmp_path, chunk_bytes=64 << 10) as served:
        digest, received = hashlib.sha256(), 0
        url = f"{served.base}/big/api/v1/all"
        async with served.session.get(url, headers={"Accept-Encoding": "identity"}) as response:
            async for chunk in response.content.iter_chunked(1 << 16):
                digest.update(chunk)
                received += len(chunk)
        assert (received, digest.hexdigest()) == (stored.size, expected)
        query = f"{served.base}/big/api/v1/metas?schema=olm.bundle&package=pkg-00003"
        async with served.session.get(query, headers={"Accept-Encoding": "gzip"}) as filtered:
            import gzip  # noqa: PLC0415

            lines = gzip.decompress(await filtered.read()).splitlines()
        assert len(lines) == 40


async def test_client_that_stops_reading_is_disconnected(tmp_path: Path, big: Storage) -> None:
    async with serving(big, tmp_path, write_stall_timeout=0.3, chunk_bytes=1 << 20) as served:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", served.server.port, ssl=served.client_context()
        )
        writer.write(b"GET /catalogs/big/api/v1/all HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(1.5)  # stop reading: the server's writes stall and it gives up
        received = 0
        try:
            while chunk := await asyncio.wait_for(reader.read(1 << 20), 5):
                received += len(chunk)
        except (ConnectionResetError, ssl.SSLError):
            pass
        writer.close()
        stored = big.get("big")
        assert stored is not None
        assert received < stored.size


async def _closed_within(reader: asyncio.StreamReader, bound: float) -> None:
    """Read until the server closes the connection; fail if it has not after `bound` seconds."""
    with contextlib.suppress(ConnectionResetError, ssl.SSLError):
        while await asyncio.wait_for(reader.read(1024), bound):
            pass


async def test_request_head_must_arrive_within_the_idle_timeout(tmp_path: Path) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path, idle_timeout=0.5) as served:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", served.server.port, ssl=served.client_context()
        )
        writer.write(b"GET /catalogs/x/api/v1/all HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # never finished
        await _closed_within(reader, 10)
        writer.close()


async def test_tls_handshake_must_finish_within_its_timeout(tmp_path: Path) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path, tls_handshake_timeout=0.5) as served:
        reader, writer = await asyncio.open_connection("127.0.0.1", served.server.port)
        writer.write(b"\x16\x03\x01")  # a ClientHello that never completes
        await _closed_within(reader, 10)
        writer.close()


async def test_get_with_a_body_is_refused_and_the_connection_closed(tmp_path: Path) -> None:
    async with serving(Storage(tmp_path / "s"), tmp_path) as served:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", served.server.port, ssl=served.client_context()
        )
        # the "body" is a second request: served, it would be smuggled past whatever is in front
        smuggled = b"GET /catalogs/x/api/v1/all HTTP/1.1\r\nHost: x\r\n\r\n"
        writer.write(
            b"GET /catalogs/x/api/v1/all HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(smuggled)
            + smuggled
        )
        answer = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        assert answer.startswith(b"HTTP/1.1 400 ")
        assert answer.count(b"HTTP/1.1") == 1  # one answer, then the connection closed


@pytest.mark.parametrize(
    ("option", "value", "request_bytes"),
    [
        pytest.param(
            "max_request_line_bytes", 100, b"GET /catalogs/" + b"a" * 200 + b" HTTP/1.1\r\n\r\n", id="line"
        ),
        pytest.param(
            "max_header_field_bytes", 100, b"GET / HTTP/1.1\r\nX: " + b"a" * 200 + b"\r\n\r\n", id="field"
        ),
        pytest.param("max_headers", 5, b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * 10 + b"\r\n", id="count"),
    ],
)
async def test_request_size_limits_are_a_400_logged_in_one_line(
    tmp_path: Path, option: str, value: int, request_bytes: bytes
) -> None:
    limit: dict[str, Any] = {option: value}
    async with serving(Storage(tmp_path / "s"), tmp_path, **limit) as served:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", served.server.port, ssl=served.client_context()
        )
        with structlog.testing.capture_logs() as logs:
            writer.write(request_bytes)
            status_line = await asyncio.wait_for(reader.readline(), 10)
            await _closed_within(reader, 10)
        writer.close()
    assert status_line.split(b" ")[1] == b"400"
    assert [entry["event"] for entry in logs] == ["http.malformed_request"]
