"""`faults.connections_of`: established TCP connections read from a process's own socket table."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest

from olm_testkit.node import faults


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server


def test_an_open_connection_counts_until_it_is_closed(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    assert faults.connections_of(os.getpid(), peers=["127.0.0.1"], port=port) == 0
    client = socket.create_connection(listener.getsockname())
    accepted, _ = listener.accept()
    # The client's socket, whose peer is the listener's port (the accepted one's peer is not).
    assert faults.connections_of(os.getpid(), peers=["127.0.0.1"], port=port) == 1
    assert faults.connections_of(os.getpid(), peers=["127.0.0.2"], port=port) == 0
    client.close()
    accepted.close()
    assert faults.connections_of(os.getpid(), peers=["127.0.0.1"], port=port) == 0


@pytest.mark.parametrize(
    ("text", "address", "port"),
    [
        pytest.param("0100007F:1F90", "127.0.0.1", 8080, id="ipv4"),
        pytest.param("0000000000000000FFFF00000A00580A:01BB", "10.88.0.10", 443, id="ipv4-mapped"),
        pytest.param("00000000000000000000000001000000:0050", "::1", 80, id="ipv6"),
    ],
)
def test_proc_addresses_are_read_word_by_word_in_host_order(text: str, address: str, port: int) -> None:
    found, found_port = faults._proc_address(text)
    assert (str(found), found_port) == (address, port)
