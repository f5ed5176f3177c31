"""The processes' smaller TLS read buffer: connections made after `limit()` use it, and a body
many times its size still arrives whole."""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import os
import ssl
from pathlib import Path

import pytest

from olm.process import tlsbuffers
from olm_runtime.testing.pki import CertificateAuthority

BODY = os.urandom(3 << 20)


async def test_a_large_body_arrives_whole_through_small_buffers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(asyncio.sslproto.SSLProtocol, "max_size", asyncio.sslproto.SSLProtocol.max_size)
    tlsbuffers.limit()
    assert asyncio.sslproto.SSLProtocol.max_size == tlsbuffers.READ_BUFFER_BYTES < 256 << 10
    authority = CertificateAuthority.load_or_create(tmp_path / "ca")
    pair = authority.issue("server", common_name="localhost", hosts=["127.0.0.1"])
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_context.load_cert_chain(pair.cert_file, pair.key_file)

    async def send(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(BODY)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(send, "127.0.0.1", 0, ssl=server_context)
    async with server:
        port = server.sockets[0].getsockname()[1]
        client_context = ssl.create_default_context(cafile=str(authority.cert_file))
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_context)
        received = await reader.read(-1)
        writer.close()
    assert received == BODY
