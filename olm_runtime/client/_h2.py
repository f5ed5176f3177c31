"""Watches over HTTP/2: the watches of every identity share a few TLS connections to the API server.

Over HTTP/1.1 each open watch pins a connection of its own (a socket, TLS state and buffers, about
75 KiB here), so a controller that watches as thousands of ServiceAccounts holds thousands of
connections. A bearer token travels with each request, not with the connection, so HTTP/2 streams of
any identity can share one connection. client-go does the same. A connection takes streams up to the
server's SETTINGS_MAX_CONCURRENT_STREAMS; the pool opens another when every one is full.

A connection that has received nothing for `READ_IDLE` seconds is sent a PING; one that answers
nothing within `PING_TIMEOUT` more is closed and its streams fail (client-go's 30 s and 15 s), so a
silently lost peer is noticed even by watches that expect no events.

Each stream may hold `STREAM_WINDOW` bytes its reader has not taken yet; the window is opened again
as the reader takes data, so a slow watch holds back its own stream and no other.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Mapping, Sequence
from urllib.parse import urlencode, urlsplit

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
import hpack
from multidict import CIMultiDict

from olm_runtime.client import errors

__all__ = ["H2Pool", "Http2Refused", "Stream"]

READ_IDLE = 30.0
PING_TIMEOUT = 15.0
STREAM_WINDOW = 2**20
CONNECTION_WINDOW = 2**30
_DEFAULT_WINDOW = 65535
_READ_SIZE = 2**16
_HOP_BY_HOP = frozenset(
    {"connection", "host", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}
)


class _Encoder(hpack.Encoder):
    """h2's header encoder, but values it never indexes go without Huffman coding. h2 never indexes
    the Authorization header, so every stream carried the bearer token Huffman-coded again: a
    kilobyte that the pure-Python coder took about half a millisecond over, 7% of
    operator-controller's CPU while a restart opened 1,000 watches. Coding saves a fifth of those
    bytes, which is worth less than the CPU."""

    def add(self, to_add: tuple[bytes, bytes], sensitive: bool, huffman: bool = False) -> bytes:
        return super().add(to_add, sensitive, huffman and not sensitive)


class Http2Refused(Exception):
    """The server did not choose HTTP/2 in the TLS handshake (ALPN); use HTTP/1.1 instead."""


class _Full(Exception):
    """The connection takes no more streams."""


class Stream:
    """One request's response: its status, its headers unless the status is 200, then its body in chunks."""

    __slots__ = (
        "_chunks",
        "_connection",
        "_ended",
        "_error",
        "_response",
        "_waiter",
        "headers",
        "id",
        "status",
    )

    def __init__(self, connection: _Connection, stream_id: int) -> None:
        self._connection = connection
        self.id = stream_id
        self.status = 0
        self.headers: CIMultiDict[str] = CIMultiDict()
        self._response: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        # A list and a future made only while the reader waits, not a deque and an Event (each
        # about 700 bytes with its deque block): a process holds thousands of watch streams, most
        # of them idle with nothing queued.
        self._chunks: list[tuple[bytes, int]] = []
        self._waiter: asyncio.Future[None] | None = None
        self._ended = False
        self._error: errors.TransportError | None = None

    async def response(self, timeout: float | None) -> None:
        """Wait for the status and headers."""
        async with asyncio.timeout(timeout):
            await asyncio.shield(self._response)

    async def read(self, timeout: float | None = None) -> bytes:
        """The next chunk of the body; `b""` at its end. `timeout` bounds the wait for data."""
        while not self._chunks:
            if self._error is not None:
                raise self._error
            if self._ended:
                return b""
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                async with asyncio.timeout(timeout):
                    await self._waiter
            finally:
                self._waiter = None
        data, length = self._chunks.pop(0)
        self._connection.acknowledge(self.id, length)
        return data

    async def body(self, timeout: float | None) -> bytes:
        """The rest of the body (an error's `Status`)."""
        parts = []
        while chunk := await self.read(timeout):
            parts.append(chunk)
        return b"".join(parts)

    def close(self) -> None:
        """Cancel the stream if it has not ended; the connection stays open for the others."""
        self._connection.forget(self, cancel=not self._ended and self._error is None)

    # Called by the connection as frames arrive.

    def on_headers(self, headers: Sequence[tuple[str, str]]) -> None:
        for name, value in headers:
            if name == ":status":
                self.status = int(value)
        # Only an error's headers are read (Retry-After, for one); a watch that opened would keep
        # its response's for its lifetime, over a kilobyte for each of thousands of watches.
        if self.status != 200:
            for name, value in headers:
                if not name.startswith(":"):
                    self.headers.add(name, value)
        if not self._response.done():
            self._response.set_result(None)

    def on_data(self, data: bytes, length: int) -> None:
        self._chunks.append((data, length))
        self._wake()

    def on_end(self) -> None:
        self._ended = True
        self._wake()

    def on_error(self, error: errors.TransportError) -> None:
        self._error = error
        if not self._response.done():
            self._response.set_exception(error)
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class _Connection:
    """One TLS connection speaking HTTP/2, and the task reading its frames."""

    def __init__(self, authority: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._authority = authority
        self._reader = reader
        self._writer = writer
        self._h2 = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
        )
        self._h2.encoder = _Encoder()
        self._streams: dict[int, Stream] = {}
        self._settled = asyncio.get_running_loop().create_future()
        self._closing = False  # no new streams: the stream IDs ran out
        self._flush_due = False
        self.failure: errors.TransportError | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Send the preface and settings; return once the server's settings are known."""
        self._h2.initiate_connection()
        self._h2.update_settings(
            {
                h2.settings.SettingCodes.ENABLE_PUSH: 0,
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: STREAM_WINDOW,
            }
        )
        self._h2.increment_flow_control_window(CONNECTION_WINDOW - _DEFAULT_WINDOW)
        self._flush()
        self._task = asyncio.create_task(self._read_frames(), name=f"http2 {self._authority}")
        await asyncio.shield(self._settled)

    @property
    def finished(self) -> bool:
        return self.failure is not None or (self._closing and not self._streams)

    def has_room(self) -> bool:
        if self._closing or self.failure is not None:
            return False
        # Our own count, not h2's open_outbound_streams, which walks every stream at each call. It
        # is never below h2's: a stream leaves it when its reader closes it, after h2 has.
        return len(self._streams) < self._h2.remote_settings.max_concurrent_streams

    def open(self, headers: list[tuple[str, str]]) -> Stream:
        """Send a request without a body on a new stream."""
        if not self.has_room():
            raise _Full
        try:
            stream_id = self._h2.get_next_available_stream_id()
            self._h2.send_headers(stream_id, headers, end_stream=True)
        except h2.exceptions.NoAvailableStreamIDError:
            self._closing = True
            raise _Full from None
        except h2.exceptions.TooManyStreamsError:
            raise _Full from None
        stream = Stream(self, stream_id)
        self._streams[stream_id] = stream
        self._flush()
        return stream

    def acknowledge(self, stream_id: int, length: int) -> None:
        if self.failure is None and length:
            with contextlib.suppress(h2.exceptions.ProtocolError):
                self._h2.acknowledge_received_data(length, stream_id)
                self._flush()

    def forget(self, stream: Stream, *, cancel: bool) -> None:
        if self._streams.pop(stream.id, None) is None:
            return
        if cancel and self.failure is None:
            with contextlib.suppress(h2.exceptions.ProtocolError):
                self._h2.reset_stream(stream.id, h2.errors.ErrorCodes.CANCEL)
                self._flush()
        if self._closing and not self._streams:
            self.close()

    def close(self) -> None:
        if self.failure is None:
            with contextlib.suppress(h2.exceptions.ProtocolError):
                self._h2.close_connection()
                self._write()  # now: the writer closes below
            self._fail(errors.TransportError(f"HTTP/2 connection to {self._authority} closed"))
        if self._task is not None:
            self._task.cancel()
        self._writer.close()

    def _flush(self) -> None:
        """Write what h2 has queued at the end of this turn of the event loop, so that the frames of
        many streams (window updates as readers take data, new requests) go out in one write."""
        if not self._flush_due:
            self._flush_due = True
            asyncio.get_running_loop().call_soon(self._write)

    def _write(self) -> None:
        self._flush_due = False
        data = self._h2.data_to_send()
        if data and not self._writer.is_closing():
            self._writer.write(data)

    def _fail(self, error: errors.TransportError) -> None:
        if self.failure is not None:
            return
        self.failure = error
        _fail_once(self._settled, error)
        for stream in list(self._streams.values()):
            stream.on_error(error)
        self._streams.clear()

    async def _read_frames(self) -> None:
        try:
            while True:
                try:
                    async with asyncio.timeout(READ_IDLE):
                        data = await self._reader.read(_READ_SIZE)
                except TimeoutError:
                    self._h2.ping(b"olm-idle")
                    self._flush()
                    try:
                        async with asyncio.timeout(PING_TIMEOUT):
                            data = await self._reader.read(_READ_SIZE)
                    except TimeoutError:
                        raise ConnectionError(f"no answer to a PING within {PING_TIMEOUT:.0f}s") from None
                if not data:
                    raise ConnectionError("the server closed the connection")
                for event in self._h2.receive_data(data):
                    self._handle(event)
                self._flush()
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError) as e:
            self._fail(errors.TransportError(f"HTTP/2 connection to {self._authority}: {e}"))
            self._writer.close()
        except Exception as e:
            # Whatever else ends this task must still fail the streams: their readers would wait
            # for data forever, and a watch that neither ends nor fails is never reopened.
            self._fail(errors.TransportError(f"HTTP/2 connection to {self._authority} failed: {e!r}"))
            self._writer.close()
            raise

    def _handle(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RemoteSettingsChanged):
            if not self._settled.done():
                self._settled.set_result(None)
            return
        if isinstance(event, h2.events.ConnectionTerminated):
            self._goaway(event.error_code)
            return
        stream_id = getattr(event, "stream_id", None)
        stream = self._streams.get(stream_id) if stream_id else None
        if isinstance(event, h2.events.DataReceived):
            if stream is None:
                # A stream already closed by its reader: give its window back to the connection.
                self.acknowledge(event.stream_id, event.flow_controlled_length)
            else:
                stream.on_data(event.data, event.flow_controlled_length)
        elif stream is None:
            return
        elif isinstance(event, h2.events.ResponseReceived):
            stream.on_headers(event.headers)  # type: ignore[arg-type]  # str pairs: header_encoding
        elif isinstance(event, h2.events.StreamEnded):
            stream.on_end()
        elif isinstance(event, h2.events.StreamReset):
            self._streams.pop(stream.id, None)
            reset = errors.TransportError(f"HTTP/2 stream reset by the server ({event.error_code!r})")
            stream.on_error(reset)

    def _goaway(self, code: object) -> None:
        """The server closes the connection. h2 ends every stream with it, even those the server
        would still finish: they fail, and their watches reopen on another connection."""
        self._fail(errors.TransportError(f"HTTP/2 connection to {self._authority} going away ({code!r})"))
        self._writer.close()


def _fail_once(future: asyncio.Future[None], error: Exception) -> None:
    """Fail `future` unless it is done, and mark the error seen: nobody may be waiting any more."""
    if not future.done():
        future.set_exception(error)
        future.exception()


class H2Pool:
    """The HTTP/2 connections to one server (an `https://` URL) for one TLS identity."""

    def __init__(self, server: str, context: ssl.SSLContext, server_hostname: str | None) -> None:
        context.set_alpn_protocols(["h2"])
        split = urlsplit(server)
        self._host, self._port = split.hostname or "", split.port or 443
        self._authority = split.netloc
        self._context = context
        self._server_hostname = server_hostname
        self._connections: list[_Connection] = []
        self._connecting = asyncio.Lock()

    @property
    def connections(self) -> int:
        return sum(not c.finished for c in self._connections)

    async def get(
        self,
        path: str,
        params: Mapping[str, str] | None,
        headers: Mapping[str, str] | CIMultiDict[str],
        *,
        connect_timeout: float,
        timeout: float | None,
    ) -> Stream:
        """Send a GET and return its stream once the status and headers have arrived."""
        target = f"{path}?{urlencode(params)}" if params else path
        request = [(":method", "GET"), (":scheme", "https"), (":authority", self._authority)]
        request.append((":path", target))
        request += [(k.lower(), v) for k, v in headers.items() if k.lower() not in _HOP_BY_HOP]
        stream = await self._open(request, connect_timeout)
        try:
            await stream.response(timeout)
        except BaseException:
            stream.close()
            raise
        return stream

    async def _open(self, request: list[tuple[str, str]], connect_timeout: float) -> Stream:
        while True:
            self._connections = [c for c in self._connections if not c.finished]
            connection = next((c for c in self._connections if c.has_room()), None)
            if connection is None:
                async with self._connecting:
                    connection = next((c for c in self._connections if c.has_room()), None)
                    if connection is None:
                        connection = await self._connect(connect_timeout)
                        self._connections.append(connection)
            with contextlib.suppress(_Full):
                return connection.open(request)

    async def _connect(self, timeout: float) -> _Connection:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(
                    self._host,
                    self._port,
                    ssl=self._context,
                    server_hostname=self._server_hostname or self._host,
                    limit=_READ_SIZE,
                )
        except (OSError, ssl.SSLError) as e:
            raise errors.TransportError(f"connect to {self._authority}: {e}") from e
        except TimeoutError as e:
            raise TimeoutError(f"connect to {self._authority} timed out") from e
        tls = writer.get_extra_info("ssl_object")
        if tls is None or tls.selected_alpn_protocol() != "h2":
            writer.close()
            raise Http2Refused(f"{self._authority} did not offer HTTP/2")
        connection = _Connection(self._authority, reader, writer)
        try:
            async with asyncio.timeout(timeout):
                await connection.start()
        except BaseException:
            connection.close()
            raise
        return connection

    def close(self) -> None:
        for connection in self._connections:
            connection.close()
        self._connections.clear()
