"""Transport behaviour at the HTTP seam: headers, retries, typed errors, watch streams, metrics."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from aiohttp import web

from olm_runtime.client import RestConfig, StaticToken, Transport, errors
from olm_runtime.client.transport import ssl_context
from olm_runtime.metrics import REGISTRY
from olm_runtime.testing.pki import CertificateAuthority

from .stub import Handler, Stub, json_response
from .test_errors import NOT_FOUND, THROTTLED


class CountingToken:
    """A token provider that hands out a new token after each invalidation."""

    def __init__(self) -> None:
        self.generation = 0

    async def token(self) -> str:
        return f"token-{self.generation}"

    def invalidate(self) -> None:
        self.generation += 1


async def test_request_sends_identity_headers_and_returns_the_raw_body(stub: Stub) -> None:
    stub.respond(json_response(b'{"ok": true}'))
    config = RestConfig(
        server=stub.url,
        token_provider=StaticToken("secret"),
        impersonate_user="jane",
        impersonate_groups=("devs", "ops"),
        user_agent="unit-test",
    )
    transport = await Transport.create(config)
    try:
        body = await transport.request(
            "post", "/api/v1/things", params={"dryRun": "All"}, body=b"{}", content_type="application/json"
        )
    finally:
        await transport.close()
    assert body == b'{"ok": true}'
    sent = stub.requests[0]
    assert (sent.method, sent.path, sent.query, sent.body) == (
        "POST",
        "/api/v1/things",
        {"dryRun": "All"},
        b"{}",
    )
    assert sent.headers["Authorization"] == "Bearer secret"
    assert sent.headers["Impersonate-User"] == "jane"
    assert sent.header_lists["Impersonate-Group"] == ["devs", "ops"]
    assert sent.headers["User-Agent"] == "unit-test"
    assert sent.headers["Accept"] == "application/json"
    assert sent.headers["Content-Type"] == "application/json"


async def test_error_statuses_raise_typed_errors(stub: Stub, transport: Transport) -> None:
    stub.respond(json_response(NOT_FOUND, status=404))
    with pytest.raises(errors.NotFound, match="missing"):
        await transport.request("GET", "/api/v1/namespaces/ns/configmaps/missing")


async def test_throttled_reads_are_retried_after_retry_after(stub: Stub, transport: Transport) -> None:
    stub.respond(
        json_response(THROTTLED, status=429, headers={"Retry-After": "0"}),
        json_response(THROTTLED, status=429, headers={"Retry-After": "0"}),
        json_response(b"{}"),
    )
    assert await transport.request("GET", "/api/v1/pods") == b"{}"
    assert len(stub.requests) == 3


async def test_throttled_reads_give_up_after_the_configured_retries(stub: Stub) -> None:
    stub.respond(json_response(THROTTLED, status=429, headers={"Retry-After": "0"}))
    transport = await Transport.create(RestConfig(server=stub.url, throttle_retries=2))
    try:
        with pytest.raises(errors.TooManyRequests) as raised:
            await transport.request("GET", "/api/v1/pods")
    finally:
        await transport.close()
    assert raised.value.retry_after == 0.0
    assert len(stub.requests) == 3  # the first try and two retries


async def test_throttled_writes_are_not_retried(stub: Stub, transport: Transport) -> None:
    stub.respond(json_response(THROTTLED, status=429, headers={"Retry-After": "0"}), json_response(b"{}"))
    with pytest.raises(errors.TooManyRequests):
        await transport.request("POST", "/api/v1/pods", body=b"{}")
    assert len(stub.requests) == 1


async def test_unauthorized_refreshes_the_token_once(stub: Stub) -> None:
    stub.respond(json_response(b"{}", status=401), json_response(b"{}"))
    provider = CountingToken()
    transport = await Transport.create(RestConfig(server=stub.url, token_provider=provider))
    try:
        await transport.request("GET", "/api")
    finally:
        await transport.close()
    assert [r.headers["Authorization"] for r in stub.requests] == ["Bearer token-0", "Bearer token-1"]

    stub.requests.clear()
    stub.respond(json_response(b"Unauthorized", status=401))
    transport = await Transport.create(RestConfig(server=stub.url, token_provider=provider))
    try:
        with pytest.raises(errors.Unauthorized):
            await transport.request("GET", "/api")
    finally:
        await transport.close()
    assert len(stub.requests) == 2  # one refresh, then the error


async def test_a_refused_connection_is_a_transport_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    transport = await Transport.create(RestConfig(server=f"http://127.0.0.1:{port}"))
    try:
        with pytest.raises(errors.TransportError, match="GET /api"):
            await transport.request("GET", "/api")
    finally:
        await transport.close()


async def test_a_slow_response_times_out(stub: Stub, transport: Transport) -> None:
    async def slow(_: web.Request) -> web.StreamResponse:
        await stub.closing.wait()
        return web.Response()

    stub.respond(slow)
    with pytest.raises(TimeoutError):
        await transport.request("GET", "/api", timeout=0.2)


async def test_requests_are_counted_by_code_method_and_host(stub: Stub, transport: Transport) -> None:
    host = stub.url.removeprefix("http://")
    labels = {"code": "404", "method": "GET", "host": host}
    before = REGISTRY.get_sample_value("rest_client_requests_total", labels) or 0.0
    stub.respond(json_response(NOT_FOUND, status=404))
    with pytest.raises(errors.NotFound):
        await transport.request("GET", "/x")
    assert REGISTRY.get_sample_value("rest_client_requests_total", labels) == before + 1


def _streaming(*chunks: bytes, status: int = 200) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(status=status)
        await response.prepare(request)
        for chunk in chunks:
            await response.write(chunk)
            await asyncio.sleep(0)
        await response.write_eof()
        return response

    return handler


async def test_stream_yields_lines_across_chunk_boundaries(stub: Stub, transport: Transport) -> None:
    big = b'{"type":"ADDED","object":{"data":"' + b"x" * 3_000_000 + b'"}}'
    stub.respond(
        _streaming(b'{"a":', b"1}\n\n{", b'"b":2}\n' + big[:1000], big[1000:] + b"\n", b'{"tail":true}')
    )
    metadata_only = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    async with transport.stream(
        "/api/v1/configmaps", params={"watch": "true"}, headers={"Accept": metadata_only}
    ) as lines:
        received = [line async for line in lines]
    assert received == [b'{"a":1}', b'{"b":2}', big, b'{"tail":true}']
    assert stub.requests[0].query == {"watch": "true"}
    assert stub.requests[0].header_lists["Accept"] == [metadata_only]


async def test_stream_raises_the_typed_error_before_yielding(stub: Stub, transport: Transport) -> None:
    stub.respond(json_response(NOT_FOUND, status=404))
    with pytest.raises(errors.NotFound):
        async with transport.stream("/api/v1/configmaps"):
            pytest.fail("a failed watch must not yield")


async def test_stream_read_timeout_bounds_silence(stub: Stub, transport: Transport) -> None:
    async def silent(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b'{"first":1}\n')
        await stub.closing.wait()
        return response

    stub.respond(silent)
    async with transport.stream("/watch", timeout=0.3) as lines:
        assert await lines.__anext__() == b'{"first":1}'
        with pytest.raises(TimeoutError):
            await lines.__anext__()


async def test_open_watches_do_not_take_connections_from_requests(stub: Stub) -> None:
    release = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch"):
            response = web.StreamResponse()
            await response.prepare(request)
            await response.write(b"{}\n")
            await release.wait()
            return response
        return web.Response(body=b"{}")

    stub.respond(handler)
    transport = await Transport.create(RestConfig(server=stub.url, max_connections=1))
    try:
        async with (
            transport.stream("/w", params={"watch": "1"}) as first,
            transport.stream("/w", params={"watch": "1"}) as second,
        ):
            assert await first.__anext__() == b"{}"
            assert await second.__anext__() == b"{}"
            # Both watches hold a connection; the single request connection is still free.
            assert await asyncio.wait_for(transport.request("GET", "/api"), timeout=5) == b"{}"
    finally:
        release.set()
        await transport.close()


async def test_derived_transports_share_pools_unless_the_tls_identity_differs(tmp_path: Path) -> None:
    root = await Transport.create(RestConfig(server="https://127.0.0.1:1", client_cert_file=tmp_path / "c"))
    impersonating = root.with_config(
        RestConfig(server="https://127.0.0.1:1", client_cert_file=tmp_path / "c", impersonate_user="u")
    )
    token_only = root.with_config(root.config.with_identity(token_provider=StaticToken("t")))
    other_token = root.with_config(root.config.with_identity(token_provider=StaticToken("u")))
    assert impersonating._pool is root._pool
    assert token_only._pool is not root._pool  # the client certificate must not be presented
    assert other_token._pool is token_only._pool
    assert token_only.config.client_cert_file is None
    await root.close()


def test_ssl_context_loads_inline_client_certificates(tmp_path: Path) -> None:
    ca = CertificateAuthority.load_or_create(tmp_path)
    pair = ca.issue("user", common_name="user", client=True)
    config = RestConfig(
        server="https://127.0.0.1:6443",
        ca_data=ca.cert_file.read_bytes(),
        client_cert_data=pair.cert_file.read_bytes(),
        client_key_data=pair.key_file.read_bytes(),
    )
    context = ssl_context(config)
    assert context.check_hostname
    assert len(context.get_ca_certs()) == 1


class RotatingToken:
    """A token the platform rotates under the process: each read may return a new value."""

    def __init__(self) -> None:
        self.current = "first"

    async def token(self) -> str:
        return self.current

    def invalidate(self) -> None:
        pass


async def test_the_token_is_read_for_every_request_so_a_rotated_token_is_used_at_once(stub: Stub) -> None:
    stub.respond(json_response(b"{}"))
    provider = RotatingToken()
    transport = await Transport.create(RestConfig(server=stub.url, token_provider=provider))
    try:
        await transport.request("GET", "/api")
        provider.current = "second"
        await transport.request("GET", "/api")
    finally:
        await transport.close()
    assert [r.headers["Authorization"] for r in stub.requests] == ["Bearer first", "Bearer second"]


async def test_a_request_that_got_no_http_response_is_counted_with_code_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    labels = {"code": "<error>", "method": "GET", "host": f"127.0.0.1:{port}"}
    before = REGISTRY.get_sample_value("rest_client_requests_total", labels) or 0.0
    transport = await Transport.create(RestConfig(server=f"http://127.0.0.1:{port}"))
    try:
        with pytest.raises(errors.TransportError):
            await transport.request("GET", "/api")
    finally:
        await transport.close()
    assert REGISTRY.get_sample_value("rest_client_requests_total", labels) == before + 1


async def test_request_latency_is_observed_by_verb_and_host(stub: Stub, transport: Transport) -> None:
    host = stub.url.removeprefix("http://")
    labels = {"verb": "PATCH", "host": host}
    before = REGISTRY.get_sample_value("rest_client_request_duration_seconds_count", labels) or 0.0
    stub.respond(json_response(b"{}"))
    await transport.request("PATCH", "/api/v1/namespaces/ns/configmaps/a", body=b"{}")
    assert REGISTRY.get_sample_value("rest_client_request_duration_seconds_count", labels) == before + 1
