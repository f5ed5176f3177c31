"""What the catalog client says when catalogd's content server cannot be reached, from real
failures on loopback: the words name the cause and stay the same from one attempt to the next
(they reach a ClusterExtension's condition, where a changing text would rewrite it every retry)."""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import AsyncIterator

import pytest

from olm.pipeline import catalogs

DIGEST = "sha256:" + "1" * 64


async def unreachable_twice(base_url: str, options: catalogs.ClientOptions) -> str:
    """The message of two attempts in a row (asserted equal), each with a new connection."""
    ref = catalogs.CatalogRef(name="c", digest=DIGEST, base_url=base_url)
    messages = []
    for _ in range(2):
        client = catalogs.CatalogClient(options)
        try:
            with pytest.raises(catalogs.CatalogUnreachable) as caught:
                await client.get_package(ref, "kube-green")
        finally:
            await client.close()
        messages.append(caught.value.message)
    assert messages[0] == messages[1]
    return messages[0]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
async def silent_port() -> AsyncIterator[int]:
    """A TCP port that accepts connections and never says a word (no TLS handshake)."""
    held: list[asyncio.StreamWriter] = []

    async def accept(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    try:
        yield int(server.sockets[0].getsockname()[1])
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


async def test_a_refused_connection_names_the_server_and_the_errno() -> None:
    port = closed_port()
    message = await unreachable_twice(f"https://127.0.0.1:{port}/catalogs/c", catalogs.ClientOptions())
    assert (
        message
        == f"catalog 'c' content server unreachable: cannot connect to 127.0.0.1:{port} (Connection refused)"
    )


async def test_a_name_that_does_not_resolve_is_named() -> None:
    message = await unreachable_twice("https://catalogd-service.invalid/catalogs/c", catalogs.ClientOptions())
    assert re.fullmatch(
        r"catalog 'c' content server unreachable: the name catalogd-service\.invalid did not resolve \(.+\)",
        message,
    ), message


async def test_a_server_that_never_completes_the_handshake_times_out_with_the_limit_named(
    silent_port: int,
) -> None:
    options = catalogs.ClientOptions(connect_timeout=0.3)
    message = await unreachable_twice(f"https://127.0.0.1:{silent_port}/catalogs/c", options)
    assert message == (
        f"catalog 'c' content server unreachable: connecting to 127.0.0.1:{silent_port} timed out after 0.3s"
    )
