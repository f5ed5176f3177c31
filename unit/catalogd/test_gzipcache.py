"""`CompressedBodies`: one compression per key however many ask at once, bounded by bytes (LRU)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from olm.catalogd.gzipcache import CompressedBodies


async def test_concurrent_requests_share_one_compression() -> None:
    cache = CompressedBodies(1 << 20)
    release = threading.Event()
    calls: list[str] = []

    def compress() -> bytes:
        calls.append("k")
        release.wait(10)
        return b"body"

    waiting = [asyncio.create_task(cache.get("k", compress)) for _ in range(20)]
    await asyncio.sleep(0)  # let every task reach the cache before the compression ends
    release.set()
    assert await asyncio.gather(*waiting) == [b"body"] * 20
    assert calls == ["k"]
    assert await cache.get("k", compress) == b"body"
    assert calls == ["k"], "a hit compresses nothing"


async def test_a_requester_that_goes_away_does_not_cancel_the_others() -> None:
    cache = CompressedBodies(1 << 20)
    release = threading.Event()

    def compress() -> bytes:
        release.wait(10)
        return b"body"

    first = asyncio.create_task(cache.get("k", compress))
    second = asyncio.create_task(cache.get("k", compress))
    await asyncio.sleep(0)
    first.cancel()
    release.set()
    assert await second == b"body"
    assert len(cache) == 1


async def test_the_least_recently_used_bodies_go_first_past_the_bound() -> None:
    cache = CompressedBodies(100)
    for key in "abc":
        await cache.get(key, lambda: b"x" * 40)
    assert (len(cache), cache.size) == (2, 80)  # "a" made room for "c"
    await cache.get("b", lambda: b"unused")  # "b" is now the most recent
    await cache.get("d", lambda: b"y" * 40)
    assert await cache.get("b", lambda: b"recompressed") == b"x" * 40
    assert await cache.get("c", lambda: b"recompressed") == b"recompressed"


async def test_a_failed_compression_is_raised_and_not_kept() -> None:
    cache = CompressedBodies(100)

    def fail() -> bytes:
        raise FileNotFoundError("replaced")

    with pytest.raises(FileNotFoundError):
        await cache.get("k", fail)
    assert await cache.get("k", lambda: b"ok") == b"ok"


def test_only_bodies_up_to_a_quarter_of_the_bound_are_cached() -> None:
    cache = CompressedBodies(400)
    assert [cache.cacheable(n) for n in (0, 1, 100, 101)] == [False, True, True, False]
    assert not CompressedBodies(0).cacheable(1)
