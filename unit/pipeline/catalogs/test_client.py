"""The catalog client against the real catalogd content server (TLS on loopback) and real catalogs."""

from __future__ import annotations

import asyncio
import io
import itertools
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from olm import fbc
from olm.catalogd.storage import Storage
from olm.pipeline import catalogs
from unit.pipeline.catalogs.serving import Running, serving

REALDATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "realdata"
COMMUNITY = REALDATA / "catalogs" / "community-operators-prod-v4.20"
DEPRECATIONS = REALDATA / "catalogs" / "upstream-example-deprecations-grokspawn"
PACKAGES = ("kube-green", "cat-facts-operator", "sailoperator")
DIGEST_1 = "sha256:" + "1" * 64
DIGEST_2 = "sha256:" + "2" * 64


def _require() -> None:
    if not COMMUNITY.is_dir():
        pytest.skip(f"real catalog data not found at {COMMUNITY.resolve()}")


def _metas(*packages: str) -> Iterator[fbc.Meta]:
    sources = [fbc.iter_metas(COMMUNITY / p) for p in packages]
    # The directory's .indexignore hides this file from a catalog walk; read it as a stream instead.
    blob = (DEPRECATIONS / "deprecations.yaml").read_bytes()
    sources.append(fbc.iter_stream(io.BytesIO(blob), "deprecations.yaml"))
    return itertools.chain.from_iterable(sources)


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    _require()
    storage = Storage(tmp_path / "store")
    await storage.store("community", DIGEST_1, _metas(*PACKAGES))
    async with serving(storage, tmp_path) as server:
        yield server


@pytest.fixture
async def client(running: Running) -> AsyncIterator[catalogs.CatalogClient]:
    client = catalogs.CatalogClient(catalogs.ClientOptions(ca_file=running.ca_file))
    try:
        yield client
    finally:
        await client.close()


def _ref(running: Running, digest: str = DIGEST_1, name: str = "community") -> catalogs.CatalogRef:
    return catalogs.CatalogRef(name=name, digest=digest, base_url=running.base(name))


def _expected(package: str) -> catalogs.PackageContent:
    return catalogs.parse_lines("x", package, [m.blob for m in fbc.iter_metas(COMMUNITY / package)])


async def test_package_scoped_fetch_reads_only_metas(
    running: Running, client: catalogs.CatalogClient
) -> None:
    content = await client.get_package(_ref(running), "sailoperator")
    expected = _expected("sailoperator")
    assert content == expected
    assert content.package is not None
    assert content.package.default_channel == "stable"
    assert len(content.bundles) == 32
    assert {c.name for c in content.channels} >= {"stable", "stable-1.27"}
    assert all(b.package == "sailoperator" for b in content.bundles)
    assert sorted(seen.query for seen in running.log) == [
        "package=sailoperator",
        "schema=olm.package&name=sailoperator",
    ]
    assert all(seen.path.endswith("/api/v1/metas") and seen.status == 200 for seen in running.log)


async def test_deprecations_come_with_the_package(running: Running, client: catalogs.CatalogClient) -> None:
    content = await client.get_package(_ref(running), "mypackage")
    assert content.deprecations is not None
    schemas = sorted(e.reference.schema_ for e in content.deprecations.entries)
    assert schemas == ["olm.bundle", "olm.channel", "olm.package"]


async def test_absent_package_is_empty_content(running: Running, client: catalogs.CatalogClient) -> None:
    content = await client.get_package(_ref(running), "no-such-package")
    assert content.empty
    assert content.name == "no-such-package"


async def test_cache_hit_sends_no_request(running: Running, client: catalogs.CatalogClient) -> None:
    first = await client.get_package(_ref(running), "kube-green")
    sent = len(running.log)
    for _ in range(3):
        assert await client.get_package(_ref(running), "kube-green") is first
    assert len(running.log) == sent == 2
    assert client.statistics().hits == 3


async def test_concurrent_calls_share_one_fetch(running: Running, client: catalogs.CatalogClient) -> None:
    results = await asyncio.gather(
        *(client.get_package(_ref(running), "cat-facts-operator") for _ in range(5))
    )
    assert all(r is results[0] for r in results)
    assert len(running.log) == 2


async def test_digest_change_invalidates_and_revalidates(
    running: Running, client: catalogs.CatalogClient
) -> None:
    before = await client.get_package(_ref(running), "kube-green")
    # Same content under a new digest: the old ETags still match, the server answers 304.
    await running.server.storage.store("community", DIGEST_2, _metas(*PACKAGES))
    same = await client.get_package(_ref(running, DIGEST_2), "kube-green")
    assert same is before
    assert [seen.status for seen in running.log[2:]] == [304, 304]
    # New content under a third digest: fetched and parsed again.
    await running.server.storage.store("community", DIGEST_1, _metas("kube-green"))
    running.log.clear()
    changed = await client.get_package(_ref(running, DIGEST_1), "cat-facts-operator")
    assert changed.empty
    assert [seen.status for seen in running.log] == [200, 200]
    assert client.statistics().not_modified == 2


async def test_digest_change_revalidates_every_cached_package(
    running: Running, client: catalogs.CatalogClient
) -> None:
    for package in ("kube-green", "cat-facts-operator"):
        await client.get_package(_ref(running), package)
    await running.server.storage.store("community", DIGEST_2, _metas(*PACKAGES))
    running.log.clear()
    for package in ("kube-green", "cat-facts-operator"):
        await client.get_package(_ref(running, DIGEST_2), package)
    assert [seen.status for seen in running.log] == [304, 304, 304, 304]


async def test_a_cancelled_fetch_does_not_cancel_waiters(
    running: Running, client: catalogs.CatalogClient
) -> None:
    first = asyncio.create_task(client.get_package(_ref(running), "sailoperator"))
    await asyncio.sleep(0)
    second = asyncio.create_task(client.get_package(_ref(running), "sailoperator"))
    await asyncio.sleep(0)
    first.cancel()
    content = await second
    assert content.package is not None
    assert first.cancelled()


async def test_fallback_to_all_when_metas_is_unsupported(tmp_path: Path) -> None:
    _require()
    storage = Storage(tmp_path / "store")
    await storage.store("community", DIGEST_1, _metas(*PACKAGES))
    async with serving(storage, tmp_path, metas=False) as running:
        options = catalogs.ClientOptions(ca_file=running.ca_file, chunk_bytes=64 << 10)
        client = catalogs.CatalogClient(options)
        try:
            content = await client.get_package(_ref(running), "cat-facts-operator")
            again = await client.get_package(_ref(running), "cat-facts-operator")
        finally:
            await client.close()
    assert content == _expected("cat-facts-operator")
    assert again is content
    assert [(s.path.rpartition("/")[2], s.status) for s in running.log] == [
        ("metas", 404),
        ("metas", 404),
        ("all", 200),
    ]
    assert client.statistics().fallbacks == 1


async def test_catalog_not_served_is_typed(running: Running, client: catalogs.CatalogClient) -> None:
    with pytest.raises(catalogs.CatalogNotServing) as caught:
        await client.get_package(_ref(running, name="missing"), "kube-green")
    assert caught.value.catalog == "missing"
    assert str(caught.value).startswith("catalog 'missing' is not being served")


async def test_unreachable_is_typed(running: Running) -> None:
    client = catalogs.CatalogClient(catalogs.ClientOptions(ca_file=running.ca_file, connect_timeout=2))
    ref = catalogs.CatalogRef(name="c", digest=DIGEST_1, base_url="https://127.0.0.1:1/catalogs/c")
    try:
        with pytest.raises(catalogs.CatalogUnreachable) as caught:
            await client.get_package(ref, "kube-green")
    finally:
        await client.close()
    assert caught.value.catalog == "c"


async def test_untrusted_certificate_is_unreachable(running: Running) -> None:
    client = catalogs.CatalogClient(catalogs.ClientOptions())  # system CAs only
    try:
        with pytest.raises(catalogs.CatalogUnreachable):
            await client.get_package(_ref(running), "kube-green")
    finally:
        await client.close()


async def test_malformed_content_is_typed(tmp_path: Path) -> None:
    bad = fbc.Meta(
        schema="olm.bundle",
        package="p",
        name="p.v1",
        blob=b'{"schema":"olm.bundle","package":"p","name":"p.v1","properties":"not-a-list"}',
        origin=fbc.Origin("bad.json", 1),
    )
    storage = Storage(tmp_path / "store")
    await storage.store("bad", DIGEST_1, [bad])
    async with serving(storage, tmp_path) as running:
        client = catalogs.CatalogClient(catalogs.ClientOptions(ca_file=running.ca_file))
        try:
            with pytest.raises(catalogs.MalformedCatalog, match="catalog 'bad' served malformed content"):
                await client.get_package(_ref(running, name="bad"), "p")
        finally:
            await client.close()


async def test_cache_is_bounded(running: Running) -> None:
    client = catalogs.CatalogClient(catalogs.ClientOptions(ca_file=running.ca_file, cache_max_bytes=1))
    try:
        await client.get_package(_ref(running), "kube-green")
        await client.get_package(_ref(running), "cat-facts-operator")
        assert client.statistics().hits == 0
        await client.get_package(_ref(running), "kube-green")  # evicted: fetched again
        assert client.statistics().hits == 0
        assert len(running.log) == 6
    finally:
        await client.close()


def test_catalog_ref_from_cluster_catalog() -> None:
    catalog = {
        "metadata": {"name": "operatorhub"},
        "status": {
            "conditions": [{"type": "Serving", "status": "True"}],
            "urls": {"base": "https://catalogd/catalogs/operatorhub"},
            "resolvedSource": {"type": "Image", "image": {"ref": DIGEST_1}},
        },
    }
    ref = catalogs.CatalogRef.from_cluster_catalog(catalog)
    assert ref == catalogs.CatalogRef(
        name="operatorhub", digest=DIGEST_1, base_url="https://catalogd/catalogs/operatorhub"
    )


@pytest.mark.parametrize(
    "status",
    [
        pytest.param({}, id="no-status"),
        pytest.param({"conditions": [{"type": "Serving", "status": "False"}]}, id="serving-false"),
        pytest.param({"conditions": [{"type": "Serving", "status": "True"}]}, id="serving-without-url"),
    ],
)
def test_catalog_ref_not_serving(status: dict[str, object]) -> None:
    with pytest.raises(catalogs.CatalogNotServing, match="'c' is not being served"):
        catalogs.CatalogRef.from_cluster_catalog({"metadata": {"name": "c"}, "status": status})


async def test_a_replica_serving_an_older_digest_is_retried_not_cached(
    running: Running, client: catalogs.CatalogClient
) -> None:
    # The status already names DIGEST_2, but this replica still serves DIGEST_1.
    with pytest.raises(catalogs.CatalogUnreachable, match=r"still serving sha256:1+, not yet sha256:2+"):
        await client.get_package(_ref(running, f"127.0.0.1/catalog@{DIGEST_2}"), "kube-green")
    await running.server.storage.store("community", DIGEST_2, _metas(*PACKAGES))
    caught_up = await client.get_package(_ref(running, f"127.0.0.1/catalog@{DIGEST_2}"), "kube-green")
    assert caught_up == _expected("kube-green")
