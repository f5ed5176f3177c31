"""A tiny registry at the HTTP seam, for unit tests only: TLS on loopback, scripted misbehaviour.

It speaks just enough of the distribution API for pulls (manifests by tag or digest, HEAD, blobs)
plus the two authentication flows, and records every request so tests can count them. e2e tests
use the real `distribution` registry instead.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from olm_runtime.manager.certwatcher import server_context
from olm_runtime.testing.pki import CertificateAuthority
from olm_testkit.images.layout import MANIFEST_MEDIA_TYPE, Image


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class FakeRegistry:
    auth: str = "none"
    """`none`, `basic` or `bearer`."""
    users: dict[str, str] = field(default_factory=dict)
    """Who may log in (Basic, or at the token endpoint); empty means anonymous tokens are issued."""
    blobs: dict[str, bytes] = field(default_factory=dict)
    manifests: dict[tuple[str, str], tuple[str, bytes]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    fail: dict[str, list[int]] = field(default_factory=dict)
    """Path -> statuses to answer (in order) before answering normally."""
    reset: dict[str, int] = field(default_factory=dict)
    """Path -> how many times to drop the connection mid-body."""
    corrupt: set[str] = field(default_factory=set)
    redirect: dict[str, str] = field(default_factory=dict)
    """Path -> Location of a 307 answered instead (a loop when it names the path itself)."""
    """Blob digests served with one byte changed."""
    digest_on_head: bool = True
    tokens: set[str] = field(default_factory=set)
    challenged: int = 0
    """How many requests were answered 401."""
    host: str = ""
    _counter: itertools.count[int] = field(default_factory=itertools.count)

    def push(self, repository: str, tag: str, image: Image) -> str:
        for blob in (*image.layers, image.config):
            self.blobs[blob.digest] = blob.data
        return self.put_manifest(repository, tag, MANIFEST_MEDIA_TYPE, image.manifest)

    def put_manifest(self, repository: str, tag: str, media_type: str, data: bytes) -> str:
        digest = sha256(data)
        self.manifests[(repository, tag)] = (media_type, data)
        self.manifests[(repository, digest)] = (media_type, data)
        return digest

    def count(self, method: str, kind: str) -> int:
        return sum(1 for m, path in self.requests if m == method and f"/{kind}/" in path)

    def _authorised(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        if self.auth == "none":
            return True
        if self.auth == "basic":
            expected = {
                "Basic " + base64.b64encode(f"{u}:{p}".encode()).decode() for u, p in self.users.items()
            }
            return header in expected
        return header.removeprefix("Bearer ") in self.tokens

    def _challenge(self, repository: str) -> web.Response:
        if self.auth == "basic":
            value = 'Basic realm="fake"'
        else:
            scope = f"repository:{repository}:pull"
            value = f'Bearer realm="https://{self.host}/token",service="fake",scope="{scope}"'
        return web.Response(status=401, headers={"WWW-Authenticate": value})

    async def _token(self, request: web.Request) -> web.Response:
        self.requests.append((request.method, request.path_qs))
        if self.users:
            header = request.headers.get("Authorization", "")
            expected = {
                "Basic " + base64.b64encode(f"{u}:{p}".encode()).decode() for u, p in self.users.items()
            }
            if header not in expected:
                return web.Response(status=401)
        token = f"token-{next(self._counter)}"
        self.tokens.add(token)
        return web.json_response({"token": token, "expires_in": 300})

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.method, request.path))
        repository, kind, reference = (
            request.match_info["repo"],
            request.match_info["kind"],
            request.match_info["ref"],
        )
        if not self._authorised(request):
            self.challenged += 1
            return self._challenge(repository)
        if request.path in self.redirect:
            return web.Response(status=307, headers={"Location": self.redirect[request.path]})
        scripted = self.fail.get(request.path)
        if scripted:
            return web.Response(status=scripted.pop(0))
        if kind == "manifests":
            found = self.manifests.get((repository, reference))
            if found is None:
                return web.json_response(
                    {"errors": [{"code": "MANIFEST_UNKNOWN", "message": "unknown"}]}, status=404
                )
            media_type, data = found
            headers = {"Content-Type": media_type}
            if request.method == "GET" or self.digest_on_head:
                headers["Docker-Content-Digest"] = sha256(data)
            return web.Response(body=data if request.method == "GET" else None, headers=headers)
        blob = self.blobs.get(reference)
        if blob is None:
            return web.json_response({"errors": [{"code": "BLOB_UNKNOWN", "message": "unknown"}]}, status=404)
        if reference in self.corrupt:
            blob = bytes([blob[0] ^ 0xFF]) + blob[1:]
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
        response.content_length = len(blob)
        await response.prepare(request)
        if self.reset.get(request.path, 0) > 0:
            self.reset[request.path] -= 1
            await response.write(blob[: len(blob) // 2])
            assert request.transport is not None
            request.transport.abort()
            return response
        await response.write(blob)
        return response


@asynccontextmanager
async def serve(registry: FakeRegistry, tmp: Path) -> AsyncIterator[tuple[FakeRegistry, Path]]:
    """Run `registry` on 127.0.0.1 with a fresh CA; yields it and the CA bundle to trust."""
    ca = CertificateAuthority.load_or_create(tmp / "fake-ca")
    pair = ca.issue("fake-registry", common_name="fake-registry", hosts=["127.0.0.1"])
    app = web.Application()
    app.router.add_get("/token", registry._token)
    app.router.add_route("*", r"/v2/{repo:.+?}/{kind:manifests|blobs}/{ref}", registry._serve)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_context(pair.cert_file, pair.key_file))
    await site.start()
    sockets: Sequence[socket.socket] = getattr(site._server, "sockets", None) or ()
    registry.host = f"127.0.0.1:{sockets[0].getsockname()[1]}"
    try:
        yield registry, ca.cert_file
    finally:
        await runner.cleanup()
