"""Watches over HTTP/2 at the protocol seam: stream limits, flow control, lost peers and GOAWAY,
against a scripted HTTP/2 server (`h2stub`). e2e/runtime/client/test_http2.py runs them against
the real API server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import hpack
import pytest
from aiohttp import web

from olm_runtime.client import RestConfig, Transport, _h2, errors
from olm_runtime.manager import certificates, tlsprofile

from .h2stub import Http2Server


@pytest.fixture
async def server() -> AsyncIterator[Http2Server]:
    async with Http2Server(max_streams=2) as running:
        yield running


@pytest.fixture
async def transport(server: Http2Server) -> AsyncIterator[Transport]:
    config = RestConfig(server=f"https://127.0.0.1:{server.port}", insecure_skip_tls_verify=True)
    transport = await Transport.create(config)
    yield transport
    await transport.close()


async def test_watches_beyond_the_servers_stream_limit_open_another_connection(
    server: Http2Server, transport: Transport
) -> None:
    async with AsyncExitStack() as stack:
        watches = [await stack.enter_async_context(transport.stream(f"/w/{i}")) for i in range(3)]
        served = [await server.streams.get() for _ in range(3)]
        assert transport.http2_connections == 2  # two streams on the first, one on the second
        assert len(server.connections) == 2
        for stream in served:
            await stream.send(stream.path.encode() + b"\n")
        assert [await anext(w) for w in watches] == [b"/w/0", b"/w/1", b"/w/2"]

    # Closing the watches cancelled their streams: a new one takes a free slot, no new connection.
    async with transport.stream("/again") as again:
        stream = await server.streams.get()
        await stream.send(b"done\n", end=True)
        assert [line async for line in again] == [b"done"]
    assert len(server.connections) == 2


async def test_each_stream_carries_its_own_token(server: Http2Server) -> None:
    base = RestConfig(server=f"https://127.0.0.1:{server.port}", insecure_skip_tls_verify=True)
    transport = await Transport.create(base)
    try:
        async with AsyncExitStack() as stack:
            for token in ("alpha", "beta"):
                derived = transport.with_config(base.with_identity(token_provider=_Token(token)))
                await stack.enter_async_context(derived.stream("/w", params={"watch": "true"}))
            first, second = await server.streams.get(), await server.streams.get()
            assert transport.http2_connections == 1
        assert first.connection is second.connection
        assert [first.headers["authorization"], second.headers["authorization"]] == [
            "Bearer alpha",
            "Bearer beta",
        ]
        assert first.path == "/w?watch=true"
    finally:
        await transport.close()


async def test_a_line_larger_than_the_stream_window_arrives_whole(
    server: Http2Server, transport: Transport
) -> None:
    line = b"x" * (3 * _h2.STREAM_WINDOW + 5)
    async with transport.stream("/big") as lines:
        stream = await server.streams.get()
        sending = asyncio.create_task(stream.send(line + b"\nlast\n", end=True))
        received = [line async for line in lines]
        await sending
    assert received == [line, b"last"]


async def test_a_silent_server_fails_its_watches_once_a_ping_goes_unanswered(
    server: Http2Server, transport: Transport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_h2, "READ_IDLE", 0.2)
    monkeypatch.setattr(_h2, "PING_TIMEOUT", 0.3)
    async with transport.stream("/w") as lines:
        stream = await server.streams.get()
        await stream.send(b"first\n")
        assert await anext(lines) == b"first"
        stream.connection.silent = True
        with pytest.raises(errors.TransportError, match="no answer to a PING"):
            await asyncio.wait_for(anext(lines), timeout=10)
    assert transport.http2_connections == 0


async def test_an_idle_connection_that_answers_pings_stays_open(
    server: Http2Server, transport: Transport, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_h2, "READ_IDLE", 0.1)
    monkeypatch.setattr(_h2, "PING_TIMEOUT", 0.3)
    async with transport.stream("/w") as lines:
        stream = await server.streams.get()
        # Several PING rounds pass with no data for the watch; then data still arrives.
        await asyncio.sleep(1.0)
        await stream.send(b"later\n")
        assert await asyncio.wait_for(anext(lines), timeout=5) == b"later"
    assert len(server.connections) == 1


async def test_goaway_ends_the_connections_watches_and_new_ones_use_a_new_connection(
    server: Http2Server, transport: Transport
) -> None:
    async with transport.stream("/old") as old:
        before = await server.streams.get()
        before.connection.goaway()
        with pytest.raises(errors.TransportError, match="going away"):
            await asyncio.wait_for(anext(old), timeout=10)
    async with transport.stream("/new") as new:
        after = await server.streams.get()
        assert after.connection is not before.connection
        await after.send(b"new\n", end=True)
        assert [line async for line in new] == [b"new"]
    assert transport.http2_connections == 1


async def test_a_tls_server_without_http2_serves_watches_over_http1() -> None:
    async def watch(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b"over http/1.1\n")
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/w", watch)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(
        runner, "127.0.0.1", 0, ssl_context=certificates.self_signed_context(tlsprofile.INTERMEDIATE)
    )
    await site.start()
    port = runner.addresses[0][1]
    transport = await Transport.create(
        RestConfig(server=f"https://127.0.0.1:{port}", insecure_skip_tls_verify=True)
    )
    try:
        for _ in range(2):  # the second watch does not ask for HTTP/2 again
            async with transport.stream("/w") as lines:
                assert [line async for line in lines] == [b"over http/1.1"]
        assert transport.http2_connections == 0
    finally:
        await transport.close()
        await runner.cleanup()


class _Token:
    def __init__(self, value: str) -> None:
        self.value = value

    async def token(self) -> str:
        return self.value

    def invalidate(self) -> None:
        pass


async def test_a_bug_in_reading_frames_fails_the_watches_instead_of_hanging_them(
    server: Http2Server, transport: Transport, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with transport.stream("/w") as lines:
        stream = await server.streams.get()

        def broken(self: object, event: object) -> None:
            raise RuntimeError("a frame we cannot handle")

        monkeypatch.setattr(_h2._Connection, "_handle", broken)
        await stream.send(b"never read\n")
        with pytest.raises(errors.TransportError, match="a frame we cannot handle"):
            await asyncio.wait_for(anext(lines), timeout=10)


def test_the_bearer_token_is_sent_literally_and_never_indexed() -> None:
    token = "Bearer " + "eyJhbGciOiJSUzI1NiJ9." * 40  # a kilobyte, as a ServiceAccount token is
    headers = [(":method", "GET"), (":path", "/api/v1/pods?watch=true"), ("authorization", token)]
    encoder = _h2._Encoder()
    blocks = [encoder.encode([*headers[:2], hpack.NeverIndexedHeaderTuple(*headers[2])]) for _ in range(2)]

    assert all(token.encode() in block for block in blocks)  # no Huffman coding of the token
    assert len(blocks[1]) < len(token) + 16  # the other headers are indexed after the first block
    decoder = hpack.Decoder()
    for block in blocks:
        decoded: list[Any] = list(decoder.decode(block))  # typed as bytes; str without `raw`
        assert [tuple(h) for h in decoded] == headers
        assert isinstance(decoded[2], hpack.NeverIndexedHeaderTuple)
