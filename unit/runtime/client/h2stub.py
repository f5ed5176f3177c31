"""An HTTP/2 server on loopback TLS for the transport's HTTP/2 tests: it answers every GET with 200
and the lines the test queues for that stream, honouring flow control, and can go silent or send
GOAWAY on command."""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.events
import h2.settings
from hyperframe.frame import GoAwayFrame

from olm_runtime.manager import certificates, tlsprofile


@dataclass
class ServerStream:
    """One request the server received, and what the test has it send."""

    path: str
    headers: dict[str, str]
    connection: ServerConnection
    stream_id: int

    async def send(self, data: bytes, *, end: bool = False) -> None:
        await self.connection.send(self.stream_id, data, end=end)


@dataclass
class ServerConnection:
    h2: h2.connection.H2Connection
    writer: asyncio.StreamWriter
    silent: bool = False
    window_opened: asyncio.Event = field(default_factory=asyncio.Event)

    def flush(self) -> None:
        if data := self.h2.data_to_send():
            self.writer.write(data)

    async def send(self, stream_id: int, data: bytes, *, end: bool) -> None:
        while data:
            size = min(
                self.h2.local_flow_control_window(stream_id), self.h2.max_outbound_frame_size, len(data)
            )
            if size == 0:
                self.window_opened.clear()
                await self.window_opened.wait()
                continue
            self.h2.send_data(stream_id, data[:size])
            data = data[size:]
            self.flush()
        if end:
            self.h2.end_stream(stream_id)
            self.flush()

    def goaway(self) -> None:
        """A graceful GOAWAY (the streams begun may finish), written past h2's state machine, which
        would close the connection at once."""
        frame = GoAwayFrame(0)
        frame.last_stream_id = self.h2.highest_inbound_stream_id
        self.writer.write(frame.serialize())


class Http2Server:
    """Serves until closed; `streams` receives every request as it arrives."""

    def __init__(self, *, max_streams: int = 100) -> None:
        self.max_streams = max_streams
        self.connections: list[ServerConnection] = []
        self.streams: asyncio.Queue[ServerStream] = asyncio.Queue()
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Http2Server:
        context = certificates.self_signed_context(tlsprofile.INTERMEDIATE)
        context.set_alpn_protocols(["h2"])
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=context)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        for connection in self.connections:
            connection.writer.close()
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        conn.initiate_connection()
        conn.update_settings({h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.max_streams})
        connection = ServerConnection(conn, writer)
        connection.flush()
        self.connections.append(connection)
        try:
            while data := await reader.read(65536):
                if connection.silent:
                    continue
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        headers = {_text(k): _text(v) for k, v in event.headers}
                        conn.send_headers(event.stream_id, [(":status", "200")])
                        await self.streams.put(
                            ServerStream(headers[":path"], headers, connection, event.stream_id)
                        )
                    elif isinstance(event, h2.events.WindowUpdated):
                        connection.window_opened.set()
                connection.flush()
        except (OSError, ssl.SSLError):
            pass
        finally:
            writer.close()


def _text(value: str | bytes) -> str:
    """h2 hands out headers as str with a `header_encoding`, though typed as bytes."""
    return value.decode() if isinstance(value, bytes) else value
