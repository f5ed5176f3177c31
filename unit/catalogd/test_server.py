"""The content server over real TLS on loopback: routes, filters, validators, ranges, gzip, errors."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
import structlog

from olm import fbc
from olm.catalogd import metrics
from olm.catalogd.storage import Storage
from olm_runtime.testing.poll import eventually
from unit.catalogd.serving import Served, serving

IDENTITY = {"Accept-Encoding": "identity"}
GZIP = {"Accept-Encoding": "gzip"}
DIGEST = "sha256:" + "d" * 64


def _objects() -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for package in ("alpha", "beta"):
        names = [f"{package}.v1.{i}.0" for i in range(3)]
        objects.append({"schema": "olm.package", "name": package, "defaultChannel": "stable"})
        objects.append(
            {
                "schema": "olm.channel",
                "package": package,
                "name": "stable",
                "entries": [{"name": n} for n in names],
            }
        )
        for i, name in enumerate(names):
            properties = [{"type": "olm.package", "value": {"packageName": package, "version": f"1.{i}.0"}}]
            objects.append(
                {
                    "schema": "olm.bundle",
                    "package": package,
                    "name": name,
                    "image": "r.io/x:1",
                    "properties": properties,
                    "padding": "x" * 600,
                }
            )
    objects.append({"schema": "example.com/custom", "package": "beta", "name": "stable", "note": "opaque"})
    return objects


OBJECTS = _objects()


def _metas(objects: list[dict[str, Any]]) -> Any:
    data = "\n".join(json.dumps(o) for o in objects).encode()
    return fbc.checked(fbc.iter_stream(io.BytesIO(data), "catalog.json"))


@pytest.fixture(scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    tmp = tmp_path_factory.mktemp("server")
    storage = Storage(tmp / "store")
    await storage.store("demo", DIGEST, _metas(OBJECTS))
    async with serving(storage, tmp) as running:
        yield running


def _lines(body: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in body.splitlines()]


async def test_all_serves_the_whole_catalog_as_jsonl(served: Served) -> None:
    async with served.session.get(f"{served.base}/demo/api/v1/all", headers=IDENTITY) as response:
        body = await response.read()
        headers = response.headers
    assert response.status == 200
    assert _lines(body) == OBJECTS
    assert headers["Content-Type"] == "application/jsonl"
    assert headers["Content-Length"] == str(len(body))
    assert headers["ETag"].startswith('"')
    assert not headers["ETag"].startswith("W/")
    assert headers["Accept-Ranges"] == "bytes"
    assert headers["Vary"] == "Accept-Encoding"
    assert "Last-Modified" in headers


async def test_head_has_the_headers_of_get_and_no_body(served: Served) -> None:
    url = f"{served.base}/demo/api/v1/all"
    async with served.session.get(url, headers=IDENTITY) as got:
        await got.read()
    async with served.session.head(url, headers=IDENTITY) as head:
        assert await head.read() == b""
    for name in ("Content-Type", "Content-Length", "ETag", "Last-Modified"):
        assert head.headers[name] == got.headers[name]


async def test_all_is_gzipped_when_accepted(served: Served) -> None:
    url = f"{served.base}/demo/api/v1/all"
    async with served.session.get(url, headers=IDENTITY) as plain:
        identity = await plain.read()
    async with served.session.get(url, headers=GZIP) as zipped:
        compressed = await zipped.read()
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(compressed) == identity
    assert len(compressed) < len(identity)
    assert zipped.headers["ETag"] != plain.headers["ETag"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("", lambda o: True, id="no-parameters-is-everything"),
        pytest.param("schema=olm.package", lambda o: o["schema"] == "olm.package", id="schema"),
        pytest.param("package=beta", lambda o: o.get("package") == "beta", id="package"),
        pytest.param("name=stable", lambda o: o["name"] == "stable", id="name-across-schemas"),
        pytest.param(
            "schema=olm.bundle&package=alpha",
            lambda o: o["schema"] == "olm.bundle" and o.get("package") == "alpha",
            id="schema-and-package",
        ),
        pytest.param(
            "schema=olm.channel&package=beta&name=stable",
            lambda o: o["schema"] == "olm.channel" and o.get("package") == "beta",
            id="all-three",
        ),
        pytest.param(
            "schema=olm.bundle&name=alpha.v1.1.0", lambda o: o["name"] == "alpha.v1.1.0", id="one-bundle"
        ),
        pytest.param(
            "schema=&package=alpha", lambda o: o.get("package") == "alpha", id="empty-values-ignored"
        ),
        pytest.param("package=nope", lambda o: False, id="no-match-is-empty"),
    ],
)
async def test_metas_filters_with_and(served: Served, query: str, expected: Any) -> None:
    async with served.session.get(f"{served.base}/demo/api/v1/metas?{query}", headers=IDENTITY) as response:
        body = await response.read()
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/jsonl"
    assert _lines(body) == [o for o in OBJECTS if expected(o)]


async def test_metas_gzip_is_compressed_on_the_fly(served: Served) -> None:
    url = f"{served.base}/demo/api/v1/metas?schema=olm.bundle"
    async with served.session.get(url, headers=GZIP) as response:
        body = await response.read()
    assert response.headers["Content-Encoding"] == "gzip"
    assert _lines(gzip.decompress(body)) == [o for o in OBJECTS if o["schema"] == "olm.bundle"]


async def test_small_bodies_are_not_compressed(served: Served) -> None:
    url = f"{served.base}/demo/api/v1/metas?schema=olm.package&name=alpha"
    async with served.session.get(url, headers=GZIP) as response:
        body = await response.read()
    assert "Content-Encoding" not in response.headers
    assert _lines(body) == [OBJECTS[0]]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param("kind=x", "unknown query parameter 'kind'", id="unknown-parameter"),
        pytest.param(
            "schema=olm.package&limit=1", "unknown query parameter 'limit'", id="unknown-among-known"
        ),
        pytest.param("package=a&package=b", "'package' is given more than once", id="repeated-parameter"),
    ],
)
async def test_metas_rejects_other_parameters(served: Served, query: str, message: str) -> None:
    async with served.session.get(f"{served.base}/demo/api/v1/metas?{query}") as response:
        assert response.status == 400
        assert message in await response.text()


@pytest.mark.parametrize("endpoint", ["all", "metas?package=alpha"])
async def test_conditional_requests(served: Served, endpoint: str) -> None:
    url = f"{served.base}/demo/api/v1/{endpoint}"
    async with served.session.get(url, headers=IDENTITY) as first:
        await first.read()
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    cases = [
        ({"If-None-Match": etag}, 304),
        ({"If-None-Match": f"W/{etag}"}, 304),
        ({"If-None-Match": '"something-else"'}, 200),
        ({"If-Modified-Since": modified}, 304),
        ({"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"}, 200),
        ({"If-None-Match": '"something-else"', "If-Modified-Since": modified}, 200),
        ({"If-Match": '"something-else"'}, 412),
        ({"If-Match": etag}, 200),
    ]
    for headers, status in cases:
        async with served.session.get(url, headers={**IDENTITY, **headers}) as response:
            body = await response.read()
        assert response.status == status, headers
        if status == 304:
            assert body == b""
            assert response.headers["ETag"] == etag


async def test_gzip_etag_also_revalidates(served: Served) -> None:
    url = f"{served.base}/demo/api/v1/all"
    async with served.session.get(url, headers=GZIP) as first:
        await first.read()
    async with served.session.get(url, headers={**GZIP, "If-None-Match": first.headers["ETag"]}) as again:
        assert again.status == 304
        assert again.headers["ETag"] == first.headers["ETag"]


async def test_metas_etag_differs_per_query(served: Served) -> None:
    tags = set()
    for query in ("package=alpha", "package=beta", "schema=olm.bundle&package=alpha"):
        async with served.session.head(
            f"{served.base}/demo/api/v1/metas?{query}", headers=IDENTITY
        ) as response:
            tags.add(response.headers["ETag"])
    assert len(tags) == 3


async def test_ranges_on_all(served: Served) -> None:
    url = f"{served.base}/demo/api/v1/all"
    async with served.session.get(url, headers=IDENTITY) as whole:
        content = await whole.read()
    size = len(content)
    for header, start, end in (
        ("bytes=0-99", 0, 100),
        ("bytes=100-", 100, size),
        ("bytes=-50", size - 50, size),
    ):
        async with served.session.get(url, headers={**GZIP, "Range": header}) as part:
            body = await part.read()
        assert part.status == 206, header
        assert body == content[start:end]
        assert part.headers["Content-Range"] == f"bytes {start}-{end - 1}/{size}"
        assert "Content-Encoding" not in part.headers
    async with served.session.get(url, headers={"Range": f"bytes={size}-"}) as unsatisfiable:
        assert unsatisfiable.status == 416
        assert unsatisfiable.headers["Content-Range"] == f"bytes */{size}"
    async with served.session.get(
        url, headers={**IDENTITY, "Range": "bytes=0-9", "If-Range": '"old"'}
    ) as stale:
        assert stale.status == 200
        assert await stale.read() == content
    headers = {**IDENTITY, "Range": "bytes=0-9", "If-Range": whole.headers["ETag"]}
    async with served.session.get(url, headers=headers) as fresh:
        assert fresh.status == 206


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Demo", id="uppercase"),
        pytest.param("a_b", id="underscore"),
        pytest.param("-demo", id="leading-dash"),
        pytest.param("demo-", id="trailing-dash"),
        pytest.param("a" * 254, id="too-long"),
        pytest.param("a%2F..%2F..%2Fetc", id="encoded-slashes"),
        pytest.param("demo..x", id="empty-label"),
    ],
)
async def test_invalid_catalog_names_are_400(served: Served, name: str) -> None:
    async with served.session.get(f"{served.base}/{name}/api/v1/all") as response:
        assert response.status == 400
        assert "invalid catalog name" in await response.text()


async def test_raw_dot_dot_never_escapes(served: Served) -> None:
    import asyncio  # noqa: PLC0415

    targets = (
        "/catalogs/../../etc/passwd/api/v1/all",
        "/catalogs/demo/../../store/api/v1/all",
        "/catalogs/%2E%2E/api/v1/all",
        "/catalogs/%2e%2e%2f%2e%2e/api/v1/all",
    )
    for target in targets:
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", served.server.port, ssl=served.client_context()
        )
        writer.write(f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        raw = await reader.read()
        writer.close()
        status = int(raw.split(b" ", 2)[1])
        assert status in (400, 404), raw[:200]
        assert b"root:" not in raw


async def test_unknown_catalog_and_path_are_404(served: Served) -> None:
    async with served.session.get(f"{served.base}/missing/api/v1/all") as missing:
        assert missing.status == 404
        assert "catalog 'missing' is not being served" in await missing.text()
    async with served.session.get(f"{served.base}/demo/api/v2/all") as other:
        assert other.status == 404


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
async def test_other_methods_are_405_with_allow(served: Served, method: str) -> None:
    async with served.session.request(method, f"{served.base}/demo/api/v1/all") as response:
        assert response.status == 405
        assert set(response.headers["Allow"].split(",")) == {"GET", "HEAD"}


async def test_requests_are_timed_and_logged(served: Served) -> None:
    def count(code: str) -> float:
        value = metrics.REGISTRY.get_sample_value(
            "catalogd_http_request_duration_seconds_count", {"code": code}
        )
        return value or 0.0

    before_ok, before_missing = count("200"), count("404")
    with structlog.testing.capture_logs() as logs:
        async with served.session.get(f"{served.base}/demo/api/v1/metas?package=alpha") as ok:
            await ok.read()
        async with served.session.get(f"{served.base}/gone/api/v1/all") as missing:
            await missing.read()
    assert (count("200"), count("404")) == (before_ok + 1, before_missing + 1)
    requests = [e for e in logs if e["event"] == "http.request"]
    assert [(e["method"], e["path"], e["status"]) for e in requests] == [
        ("GET", "/catalogs/demo/api/v1/metas", 200),
        ("GET", "/catalogs/gone/api/v1/all", 404),
    ]
    assert requests[0]["query"] == "package=alpha"
    assert requests[0]["bytes"] > 0


async def test_new_version_changes_validators_and_content(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "store")
    await storage.store("demo", DIGEST, _metas(OBJECTS))
    async with serving(storage, tmp_path) as running:
        url = f"{running.base}/demo/api/v1/all"
        async with running.session.get(url, headers=IDENTITY) as before:
            await before.read()
        await storage.store("demo", "sha256:" + "e" * 64, _metas(OBJECTS[:5]))
        async with running.session.get(
            url, headers={**IDENTITY, "If-None-Match": before.headers["ETag"]}
        ) as after:
            body = await after.read()
        assert after.status == 200
        assert _lines(body) == OBJECTS[:5]
        await storage.delete("demo")
        async with running.session.get(url) as gone:
            assert gone.status == 404


async def test_response_bytes_are_counted_by_endpoint_and_code(served: Served) -> None:
    def sent(endpoint: str, code: str) -> float:
        labels = {"endpoint": endpoint, "code": code}
        return metrics.REGISTRY.get_sample_value("catalogd_http_response_bytes_total", labels) or 0.0

    def headers_size(response: aiohttp.ClientResponse) -> int:
        lines = [f"HTTP/1.1 {response.status} {response.reason}".encode()]
        lines += [name + b": " + value for name, value in response.raw_headers]
        return sum(len(line) + 2 for line in lines) + 2  # CRLF after each line and after the last

    before = {key: sent(*key) for key in (("all", "200"), ("metas", "200"), ("all", "404"))}
    async with served.session.get(f"{served.base}/demo/api/v1/all", headers=GZIP) as whole:
        all_bytes = len(await whole.read())  # the session does not decompress: bytes on the wire
        all_bytes += headers_size(whole)
    async with served.session.get(f"{served.base}/demo/api/v1/metas?package=beta", headers=IDENTITY) as one:
        metas_bytes = len(await one.read()) + headers_size(one)
    async with served.session.get(f"{served.base}/gone/api/v1/all") as missing:
        await missing.read()

    # The server counts a response once its handler returns, which can be after the client has
    # read the last byte.
    async def counted() -> bool:
        return all(sent(*key) > before[key] for key in (("all", "200"), ("metas", "200")))

    await eventually(counted, what="both responses to be counted", timeout=5)
    assert sent("all", "200") - before[("all", "200")] == all_bytes
    assert sent("metas", "200") - before[("metas", "200")] == metas_bytes
    assert (
        metrics.REGISTRY.get_sample_value(
            "catalogd_http_response_bytes_total", {"endpoint": "all", "code": "404"}
        )
        == before[("all", "404")]
    )
