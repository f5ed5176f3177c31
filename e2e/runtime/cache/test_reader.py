"""What `CacheReader` promises against the real API server: reads come from the cache, a write of a
stale read fails with Conflict instead of undoing a newer change, and unwatched namespaces are an
error rather than an empty answer."""

from __future__ import annotations

import pytest

from olm_runtime import cache
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.poll import eventually

from .conftest import configmap, new_cache, running


async def test_a_write_of_a_stale_cached_read_fails_with_conflict(admin: Client, namespace: str) -> None:
    await admin.create(configmap("settings", namespace, mode="fast"))
    shared = new_cache(admin, namespaces=(namespace,))
    reader = cache.CacheReader(shared)
    async with running(shared):
        read = await reader.get(kinds.CONFIG_MAP, "settings", namespace=namespace)
        await admin.patch(kinds.CONFIG_MAP, "settings", {"data": {"mode": "safe"}}, namespace=namespace)
        stale = cache.mutable_copy(read)
        stale["data"]["mode"] = "reckless"
        with pytest.raises(errors.Conflict):
            await admin.update(stale)
        assert (await admin.get(kinds.CONFIG_MAP, "settings", namespace=namespace))["data"] == {
            "mode": "safe"
        }

        async def caught_up() -> bool:
            current = await reader.get(kinds.CONFIG_MAP, "settings", namespace=namespace)
            return bool(current["data"] == {"mode": "safe"})

        await eventually(caught_up, what="the cache to catch up with the write", timeout=30)
        # The retry reads again, and its write goes through.
        fresh = cache.mutable_copy(await reader.get(kinds.CONFIG_MAP, "settings", namespace=namespace))
        fresh["data"]["mode"] = "reckless"
        await admin.update(fresh)


async def test_reads_are_answered_from_the_cache_without_asking_the_server(
    admin: Client, namespace: str
) -> None:
    await admin.create(configmap("cached", namespace, {"app": "web"}, v="1"))
    shared = new_cache(admin, namespaces=(namespace,))
    reader = cache.CacheReader(shared)
    async with running(shared):
        first = await reader.get(kinds.CONFIG_MAP, "cached", namespace=namespace)
        informer = await shared.get_informer(kinds.CONFIG_MAP)
        lists_before = informer.statistics().reflectors[0].lists
        for _ in range(50):
            assert await reader.get(kinds.CONFIG_MAP, "cached", namespace=namespace) is first
        listed = await reader.list(kinds.CONFIG_MAP, namespace=namespace, label_selector="app=web")
        assert [o["metadata"]["name"] for o in listed] == ["cached"]
        assert informer.statistics().reflectors[0].lists == lists_before


async def test_reading_a_namespace_the_cache_does_not_watch_raises_not_cached(
    admin: Client, namespace: str
) -> None:
    await admin.create(configmap("elsewhere", namespace))
    shared = new_cache(admin, namespaces=("some-other-namespace",))
    reader = cache.CacheReader(shared)
    async with running(shared):
        with pytest.raises(cache.NotCached, match=namespace):
            await reader.get(kinds.CONFIG_MAP, "elsewhere", namespace=namespace)
        with pytest.raises(cache.NotCached):
            await reader.list(kinds.CONFIG_MAP, namespace=namespace)


async def test_an_object_the_cache_has_not_seen_is_not_found(admin: Client, namespace: str) -> None:
    shared = new_cache(admin, namespaces=(namespace,))
    reader = cache.CacheReader(shared)
    async with running(shared):
        with pytest.raises(errors.NotFound, match="not found in the cache"):
            await reader.get(kinds.CONFIG_MAP, "not-yet", namespace=namespace)
        await admin.create(configmap("not-yet", namespace))

        async def seen() -> bool:
            try:
                await reader.get(kinds.CONFIG_MAP, "not-yet", namespace=namespace)
            except errors.NotFound:
                return False
            return True

        await eventually(seen, what="the watch to bring the new object", timeout=30)
