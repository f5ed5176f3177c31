"""Reading a catalog's content: the advertised URL first, the API server's service proxy when that
URL cannot be reached from here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping

import pytest
from aiohttp import web

from olm.cli.catalogs.content import read_catalog
from olm.cli.catalogs.source import ContentSource, proxy_path
from olm.pipeline.catalogs import CatalogNotServing, CatalogRef, CatalogUnreachable
from olm_runtime.client import errors
from olm_runtime.testing.process import free_ports
from unit.cli.catalog_data import BODY


class RecordingRequester:
    """Stands in for the API server transport; answers the proxy path with `body` or `error`."""

    def __init__(self, body: bytes = BODY, error: Exception | None = None) -> None:
        self.body = body
        self.error = error
        self.paths: list[str] = []

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> bytes:
        self.paths.append(f"{method} {path}")
        if self.error is not None:
            raise self.error
        return self.body


def ref(base: str) -> CatalogRef:
    return CatalogRef(name="demo", digest="registry.example/c@sha256:00", base_url=base)


@pytest.fixture
async def content_server() -> AsyncIterator[str]:
    """A plain-HTTP stand-in for catalogd: `/catalogs/demo/api/v1/all` serves the test catalog."""

    async def serve(request: web.Request) -> web.Response:
        if request.match_info["name"] != "demo":
            return web.Response(status=404)
        return web.Response(body=BODY, content_type="application/jsonl")

    app = web.Application()
    app.router.add_get("/catalogs/{name}/api/v1/all", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_ports(1)[0]
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        yield f"http://127.0.0.1:{port}/catalogs"
    finally:
        await runner.cleanup()


async def test_the_advertised_url_is_read_when_reachable(content_server: str) -> None:
    requester = RecordingRequester()
    packages = await read_catalog(ContentSource(requester=requester), ref(f"{content_server}/demo"))
    assert sorted(packages) == ["cat-facts", "kube-green"]
    assert requester.paths == []


async def test_a_404_means_not_serving(content_server: str) -> None:
    with pytest.raises(CatalogNotServing, match="answered 404"):
        await read_catalog(ContentSource(requester=RecordingRequester()), ref(f"{content_server}/gone"))


async def test_an_unreachable_url_falls_back_to_the_service_proxy() -> None:
    port = free_ports(1)[0]  # nothing listens there: the connection is refused
    requester = RecordingRequester()
    source = ContentSource(requester=requester, system_namespace="olm-ns")
    packages = await read_catalog(source, ref(f"https://127.0.0.1:{port}/catalogs/demo"))
    assert sorted(packages) == ["cat-facts", "kube-green"]
    assert requester.paths == [
        "GET /api/v1/namespaces/olm-ns/services/https:catalogd-service:https/proxy/catalogs/demo/api/v1/all"
    ]


async def test_an_unresolvable_name_falls_back_to_the_service_proxy() -> None:
    requester = RecordingRequester()
    base = "https://catalogd-service.olmv1-system.svc.invalid/catalogs/demo"
    packages = await read_catalog(ContentSource(requester=requester), ref(base))
    assert "kube-green" in packages
    assert len(requester.paths) == 1


async def test_a_failing_proxy_names_both_causes() -> None:
    port = free_ports(1)[0]
    failure = errors.from_response(503, b"no endpoints available for service", {})
    source = ContentSource(requester=RecordingRequester(error=failure))
    with pytest.raises(CatalogUnreachable) as caught:
        await read_catalog(source, ref(f"https://127.0.0.1:{port}/catalogs/demo"))
    message = caught.value.message
    assert f"127.0.0.1:{port}" in message
    assert "olmv1-system/catalogd-service" in message
    assert "no endpoints available" in message


def test_proxy_path_keeps_the_advertised_path() -> None:
    source = ContentSource(requester=RecordingRequester())
    assert proxy_path(source, ref("https://catalogd-service.olmv1-system.svc/catalogs/demo/")) == (
        "/api/v1/namespaces/olmv1-system/services/https:catalogd-service:https/proxy/catalogs/demo/api/v1/all"
    )
