"""A tiny HTTP stub on loopback for transport-level behaviour (retries, headers, streaming).

It is not an API server: each test scripts the exact responses it needs. Anything about Kubernetes
semantics is tested in e2e/ against the real control plane.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest
from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    header_lists: dict[str, list[str]]
    body: bytes


@dataclass
class Stub:
    url: str = ""
    requests: list[Recorded] = field(default_factory=list)
    handlers: list[Handler] = field(default_factory=list)
    """Consumed one per request; the last one is reused once the others are used up."""
    closing: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the test ends: handlers that hang wait for it, so the server can stop."""

    def respond(self, *handlers: Handler) -> None:
        self.handlers = list(handlers)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(
            Recorded(
                method=request.method,
                path=request.path,
                query=dict(request.query),
                headers=dict(request.headers),
                header_lists={k: request.headers.getall(k) for k in request.headers},
                body=await request.read(),
            )
        )
        handler = self.handlers.pop(0) if len(self.handlers) > 1 else self.handlers[0]
        return await handler(request)


def json_response(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Handler:
    async def handler(_: web.Request) -> web.StreamResponse:
        return web.Response(body=body, status=status, headers=headers, content_type="application/json")

    return handler


@pytest.fixture
async def stub() -> AsyncIterator[Stub]:
    state = Stub()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", state._handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    state.url = f"http://127.0.0.1:{port}"
    try:
        yield state
    finally:
        state.closing.set()
        await runner.cleanup()
