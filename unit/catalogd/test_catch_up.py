"""A replica asked for a catalog it does not hold yet: `catch_up` fetches it while the request waits."""

from __future__ import annotations

import asyncio
from pathlib import Path

from olm.catalogd.server import NotHeldHere
from olm.catalogd.storage import Storage, StoredCatalog
from olm_runtime.testing.poll import eventually
from unit.catalogd.serving import serving
from unit.catalogd.test_server import DIGEST, IDENTITY, OBJECTS, _lines, _metas


async def test_a_catalog_fetched_on_the_miss_is_served_to_that_request(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "store")
    asked: list[str] = []

    async def catch_up(name: str) -> StoredCatalog | None:
        asked.append(name)
        return await storage.store(name, DIGEST, _metas(OBJECTS))

    async with serving(storage, tmp_path, catch_up=catch_up) as running:
        async with running.session.get(f"{running.base}/late/api/v1/all", headers=IDENTITY) as response:
            body = await response.read()
        assert response.status == 200
        assert _lines(body) == OBJECTS
        async with running.session.get(f"{running.base}/late/api/v1/all", headers=IDENTITY) as again:
            await again.read()
        assert again.status == 200
    assert asked == ["late"]  # the second request found it stored


async def test_a_catalog_not_to_be_served_is_still_404(tmp_path: Path) -> None:
    async def catch_up(name: str) -> StoredCatalog | None:
        return None

    async with (
        serving(Storage(tmp_path / "store"), tmp_path, catch_up=catch_up) as running,
        running.session.get(f"{running.base}/nothing/api/v1/all") as response,
    ):
        text = await response.text()
    assert (response.status, text) == (404, "catalog 'nothing' is not being served")


async def test_a_catalog_this_replica_cannot_fetch_is_503_with_the_reason(tmp_path: Path) -> None:
    async def catch_up(name: str) -> StoredCatalog | None:
        raise NotHeldHere("pulling r.io/c@sha256:abc: connection refused")

    async with (
        serving(Storage(tmp_path / "store"), tmp_path, catch_up=catch_up) as running,
        running.session.get(f"{running.base}/broken/api/v1/metas") as response,
    ):
        text = await response.text()
    assert response.status == 503
    assert response.headers["Retry-After"] == "5"
    assert (
        text
        == "catalog 'broken' is not available on this replica: pulling r.io/c@sha256:abc: connection refused"
    )


async def test_a_request_that_gives_up_waiting_leaves_the_fetch_running(tmp_path: Path) -> None:
    storage = Storage(tmp_path / "store")
    release = asyncio.Event()

    async def catch_up(name: str) -> StoredCatalog | None:
        await release.wait()  # a slow pull
        return await storage.store(name, DIGEST, _metas(OBJECTS))

    async with serving(storage, tmp_path, catch_up=catch_up, catch_up_timeout=0.2) as running:
        async with running.session.get(f"{running.base}/slow/api/v1/all") as response:
            text = await response.text()
        assert response.status == 503
        assert text == "catalog 'slow' is still being fetched by this replica; retry"
        release.set()

        async def stored() -> bool:
            return storage.get("slow") is not None

        await eventually(stored, what="the fetch the request started to finish", timeout=5)
