"""gzip `metas` answers: compressed once per version and query, the whole catalog from disk."""

from __future__ import annotations

import gzip
from pathlib import Path

from olm.catalogd.storage import Storage
from unit.catalogd.serving import serving
from unit.catalogd.test_server import DIGEST, GZIP, IDENTITY, OBJECTS, _lines, _metas


async def test_a_repeated_query_gets_the_same_cached_body(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "store")
    await storage.store("demo", DIGEST, _metas(OBJECTS))
    async with serving(storage, tmp_path) as running:
        url = f"{running.base}/demo/api/v1/metas?schema=olm.bundle"
        bodies = []
        for _ in range(2):
            async with running.session.get(url, headers=GZIP) as response:
                bodies.append(await response.read())
            assert response.headers["Content-Encoding"] == "gzip"
            assert response.headers["Content-Length"] == str(len(bodies[-1]))
        assert bodies[0] == bodies[1]
        assert _lines(gzip.decompress(bodies[0])) == [o for o in OBJECTS if o["schema"] == "olm.bundle"]

        await storage.store("demo", "sha256:" + "e" * 64, _metas(OBJECTS[:5]))
        async with running.session.get(url, headers=GZIP) as response:
            newer = gzip.decompress(await response.read())
        assert _lines(newer) == [o for o in OBJECTS[:5] if o["schema"] == "olm.bundle"], "no stale body"


async def test_without_the_cache_bodies_are_compressed_while_streaming(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "store")
    await storage.store("demo", DIGEST, _metas(OBJECTS))
    async with serving(storage, tmp_path, metas_gzip_cache_bytes=0) as running:
        url = f"{running.base}/demo/api/v1/metas?package=alpha"
        async with running.session.get(url, headers=GZIP) as response:
            body = await response.read()
        assert response.headers["Content-Encoding"] == "gzip"
        assert "Content-Length" not in response.headers  # chunked: the size is known only at the end
        assert _lines(gzip.decompress(body)) == [o for o in OBJECTS if o.get("package") == "alpha"]


async def test_metas_of_the_whole_catalog_is_the_stored_gzip_file(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "store")
    stored = await storage.store("demo", DIGEST, _metas(OBJECTS))
    async with serving(storage, tmp_path) as running:
        async with running.session.get(f"{running.base}/demo/api/v1/metas", headers=GZIP) as response:
            body = await response.read()
        async with running.session.get(f"{running.base}/demo/api/v1/all", headers=IDENTITY) as plain:
            identity = await plain.read()
    assert body == stored.gzip_path.read_bytes()
    assert gzip.decompress(body) == identity


async def test_until_the_gzip_form_is_written_all_goes_out_in_identity(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "store")
    stored = await storage.store("demo", DIGEST, _metas(OBJECTS))
    await storage.wait_compressed()
    stored.gzip_path.unlink()  # as a restart finds a version it had not compressed yet
    restarted = Storage(tmp_path / "store")
    async with serving(restarted, tmp_path) as running:
        async with running.session.get(f"{running.base}/demo/api/v1/all", headers=GZIP) as response:
            body = await response.read()
        assert "Content-Encoding" not in response.headers
        assert not response.headers["ETag"].endswith('-gzip"')
        assert body == stored.all_path.read_bytes()
        async with running.session.get(f"{running.base}/demo/api/v1/metas", headers=GZIP) as whole:
            compressed = await whole.read()
        assert whole.headers["Content-Encoding"] == "gzip"  # compressed for this answer instead
        assert gzip.decompress(compressed) == body

        served = restarted.get("demo")
        assert served is not None
        restarted.compress(served)
        await restarted.wait_compressed()
        async with running.session.get(f"{running.base}/demo/api/v1/all", headers=GZIP) as response:
            zipped = await response.read()
        assert response.headers["Content-Encoding"] == "gzip"
        assert zipped == served.gzip_path.read_bytes()
