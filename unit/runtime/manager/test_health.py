"""`/healthz` and `/readyz` answer the way Kubernetes components do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from olm_runtime.manager import health


async def failing() -> None:
    raise RuntimeError("informer pods has not synced")


async def hanging() -> None:
    await asyncio.Event().wait()


@pytest.fixture
async def readyz() -> AsyncIterator[tuple[health.Checks, TestClient[web.Request, web.Application]]]:
    checks = health.Checks("readyz")
    app = web.Application()
    checks.install(app)
    async with TestClient(TestServer(app)) as client:
        yield checks, client


async def test_all_passing_answers_ok(
    readyz: tuple[health.Checks, TestClient[web.Request, web.Application]],
) -> None:
    checks, client = readyz
    checks.add("ping", health.ping)
    response = await client.get("/readyz")
    assert response.status == 200
    assert await response.text() == "ok"


async def test_verbose_lists_every_check(
    readyz: tuple[health.Checks, TestClient[web.Request, web.Application]],
) -> None:
    checks, client = readyz
    checks.add("ping", health.ping)
    checks.add("cache-sync", health.ping)
    response = await client.get("/readyz?verbose")
    assert response.status == 200
    assert await response.text() == "[+]ping ok\n[+]cache-sync ok\nreadyz check passed\n"


async def test_a_failing_check_fails_the_endpoint_with_its_reason(
    readyz: tuple[health.Checks, TestClient[web.Request, web.Application]],
) -> None:
    checks, client = readyz
    checks.add("ping", health.ping)
    checks.add("cache-sync", failing)
    response = await client.get("/readyz")
    assert response.status == 500
    assert await response.text() == (
        "[+]ping ok\n[-]cache-sync failed: informer pods has not synced\nreadyz check failed\n"
    )


async def test_excluded_checks_are_skipped(
    readyz: tuple[health.Checks, TestClient[web.Request, web.Application]],
) -> None:
    checks, client = readyz
    checks.add("ping", health.ping)
    checks.add("cache-sync", failing)
    response = await client.get("/readyz?verbose&exclude=cache-sync&exclude=nope")
    assert response.status == 200
    assert "no matches for 'nope'" in await response.text()


async def test_one_check_by_path(
    readyz: tuple[health.Checks, TestClient[web.Request, web.Application]],
) -> None:
    checks, client = readyz
    checks.add("ping", health.ping)
    checks.add("cache-sync", failing)
    assert (await client.get("/readyz/ping")).status == 200
    assert (await client.get("/readyz/cache-sync")).status == 500
    assert (await client.get("/readyz/unknown")).status == 404


async def test_a_hanging_check_times_out(
    readyz: tuple[health.Checks, TestClient[web.Request, web.Application]], monkeypatch: pytest.MonkeyPatch
) -> None:
    checks, client = readyz
    monkeypatch.setattr(health, "CHECK_TIMEOUT", 0.05)
    checks.add("stuck", hanging)
    response = await client.get("/readyz")
    assert response.status == 500
    assert "[-]stuck failed: timed out" in await response.text()


@pytest.mark.parametrize("name", ["", "Cache", "cache_sync", "-x", "x-"])
def test_check_names_are_dns_labels(name: str) -> None:
    with pytest.raises(ValueError, match="lower-case"):
        health.Checks("readyz").add(name, health.ping)


def test_a_name_is_registered_once() -> None:
    checks = health.Checks("healthz")
    checks.add("ping", health.ping)
    with pytest.raises(ValueError, match="already registered"):
        checks.add("ping", health.ping)


async def test_the_checks_of_an_endpoint_run_concurrently(
    readyz: tuple[health.Checks, TestClient[web.Request, web.Application]],
) -> None:
    checks, client = readyz
    started: list[str] = []
    both_started = asyncio.Event()

    def meeting(name: str) -> health.Check:
        # Each check passes only once the other has started: run one after the other, they would
        # both time out.
        async def check() -> None:
            started.append(name)
            if len(started) == 2:
                both_started.set()
            await asyncio.wait_for(both_started.wait(), 2)

        return check

    checks.add("first", meeting("first"))
    checks.add("second", meeting("second"))
    response = await client.get("/readyz")
    assert response.status == 200, await response.text()
    assert sorted(started) == ["first", "second"]
