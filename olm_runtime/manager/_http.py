"""An aiohttp application bound to one address, as a runnable: the probe, metrics and webhook servers."""

from __future__ import annotations

import asyncio
import ssl

from aiohttp import web

__all__ = ["DISABLED", "Server", "parse_bind_address"]

DISABLED = frozenset({"", "0"})
"""Bind addresses that mean "do not serve" (controller-runtime's spelling)."""


def parse_bind_address(address: str) -> tuple[str | None, int] | None:
    """`":8080"` -> every interface, `"127.0.0.1:8080"` or `"[::1]:8080"` -> one; `"0"` or `""` -> None
    (disabled). Port 0 asks the kernel for a free port."""
    if address in DISABLED:
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"bind address {address!r} is not [host]:port, '0' or ''")
    host = host.removeprefix("[").removesuffix("]")
    return (host or None, int(port))


class Server:
    """Serves `app` on `host:port` from `start()` until cancelled.

    `start()` binds first, so a taken port fails it at once; `wait_started()` returns once the socket
    listens. On cancellation it stops accepting, gives requests in flight `shutdown_timeout` seconds,
    and closes.
    """

    needs_leader_election = False

    def __init__(
        self,
        name: str,
        app: web.Application,
        host: str | None,
        port: int,
        *,
        ssl_context: ssl.SSLContext | None = None,
        shutdown_timeout: float = 5.0,
    ) -> None:
        self.name = name
        self._app = app
        self._host = host
        self._port = port
        self._ssl_context = ssl_context
        self._shutdown_timeout = shutdown_timeout
        self._listening = asyncio.Event()
        self._addresses: list[tuple[str, int]] = []

    @property
    def addresses(self) -> list[tuple[str, int]]:
        """The (host, port) pairs listened on, once started (useful with port 0)."""
        return list(self._addresses)

    @property
    def listening(self) -> bool:
        return self._listening.is_set()

    async def wait_started(self) -> None:
        await self._listening.wait()

    async def start(self) -> None:
        runner = web.AppRunner(
            self._app, access_log=None, handle_signals=False, shutdown_timeout=self._shutdown_timeout
        )
        await runner.setup()
        try:
            site = web.TCPSite(runner, self._host, self._port, ssl_context=self._ssl_context)
            await site.start()
            self._addresses = [(str(a[0]), int(a[1])) for a in runner.addresses]
            self._listening.set()
            await asyncio.Event().wait()
        finally:
            self._listening.clear()
            await runner.cleanup()
