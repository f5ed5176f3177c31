"""Recovery on control planes of their own: an API server restart, and resourceVersions that expire.

Each module-scoped plane is separate from the session's shared one, so stopping its API server or
starving its history disturbs no other test.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from e2e.faults import own_control_plane
from e2e.runtime.client.conftest import namespace_settled
from olm_runtime import cache
from olm_runtime.client import Client, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually

from .conftest import cache_state, configmap, connect, create_all, new_cache, running, server_state


@pytest.fixture(scope="module")
def restartable_plane(
    control_plane_binaries: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    """A default control plane whose API server the tests stop and start."""
    yield from own_control_plane(control_plane_binaries, tmp_path_factory.mktemp("restartable"))


@pytest.fixture(scope="module")
def forgetful_plane(
    control_plane_binaries: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    """A control plane that forgets quickly: no watch cache for ConfigMaps (lists and watches go to
    etcd), etcd compacted every 2 s (old resourceVersions answer 410 Gone), and no streaming lists."""
    yield from own_control_plane(
        control_plane_binaries,
        tmp_path_factory.mktemp("forgetful"),
        "--watch-cache-sizes=configmaps#0",
        "--etcd-compaction-interval=2s",
        "--feature-gates=WatchList=false",
    )


async def _admin_of(plane: ControlPlane) -> AsyncIterator[tuple[Client, str]]:
    async with await connect(plane.kubeconfig) as client:
        namespace = f"t-{uuid.uuid4().hex[:8]}"
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        # So that a cache listed by the test and the server read after it agree.
        await namespace_settled(client, namespace)
        yield client, namespace


@pytest.fixture
async def restartable(restartable_plane: ControlPlane) -> AsyncIterator[tuple[Client, str]]:
    async for pair in _admin_of(restartable_plane):
        yield pair


@pytest.fixture
async def forgetful(forgetful_plane: ControlPlane) -> AsyncIterator[tuple[Client, str]]:
    async for pair in _admin_of(forgetful_plane):
        yield pair


@pytest.mark.parametrize("mode", [cache.ListMode.STREAMING, cache.ListMode.PAGED], ids=["streaming", "paged"])
async def test_a_watch_resumes_after_the_api_server_restarts_and_no_update_is_lost(
    restartable_plane: ControlPlane, restartable: tuple[Client, str], mode: cache.ListMode
) -> None:
    admin, namespace = restartable
    await create_all(admin, (configmap(f"cm-{i:02}", namespace, v="0") for i in range(40)))
    shared = new_cache(admin, namespaces=(namespace,), reflector=cache.ReflectorOptions(list_mode=mode))
    informer = await shared.get_informer(kinds.CONFIG_MAP)

    async def converged() -> bool:
        return cache_state(informer, namespace) == await server_state(admin, namespace)

    async with running(shared):
        await shared.wait_for_cache_sync(timeout=60)
        before = informer.statistics().reflectors[0]
        await asyncio.to_thread(restartable_plane.stop_component, "kube-apiserver")

        async def noticed() -> bool:
            return informer.statistics().reflectors[0].errors > before.errors

        await eventually(noticed, what="the reflector to notice the API server is gone")
        await asyncio.to_thread(restartable_plane.start_component, "kube-apiserver")
        # Write at once, while the reflector is most likely still backing off.
        for i in range(0, 10):
            await admin.patch(
                kinds.CONFIG_MAP, f"cm-{i:02}", {"data": {"v": "after-restart"}}, namespace=namespace
            )
        for i in range(10, 20):
            await admin.delete(kinds.CONFIG_MAP, f"cm-{i:02}", namespace=namespace)
        await create_all(admin, (configmap(f"new-{i}", namespace, v="1") for i in range(10)))
        await eventually(converged, what="the cache to converge after the restart", timeout=120)

        # The watch is live again (not merely relisted once): later changes arrive too.
        await admin.patch(kinds.CONFIG_MAP, "cm-39", {"data": {"v": "later"}}, namespace=namespace)
        await eventually(converged, what="a change after recovery to reach the cache")
        after = informer.statistics().reflectors[0]
    assert after.watches > before.watches
    assert informer.get("cm-05", namespace)["data"]["v"] == "after-restart"  # type: ignore[index]
    assert informer.get("cm-15", namespace) is None


async def test_a_server_without_streaming_lists_is_synced_with_paged_lists(
    forgetful: tuple[Client, str],
) -> None:
    admin, namespace = forgetful
    await create_all(admin, (configmap(f"cm-{i:03}", namespace) for i in range(250)))
    options = cache.ReflectorOptions(list_mode=cache.ListMode.STREAMING, page_size=100)
    shared = new_cache(admin, namespaces=(namespace,), reflector=options)
    informer = await shared.get_informer(kinds.CONFIG_MAP)
    async with running(shared):
        await shared.wait_for_cache_sync(timeout=60)
        assert cache_state(informer, namespace) == await server_state(admin, namespace)
        stats = informer.statistics().reflectors[0]
    assert not stats.streaming  # the server rejected sendInitialEvents; the reflector fell back
    assert (stats.streaming_lists, stats.lists) == (0, 1)
    assert stats.pages == 3  # 251 objects from etcd, 100 per page


async def test_410_gone_triggers_a_relist_not_a_crash(forgetful: tuple[Client, str]) -> None:
    """The informer's namespace is quiet while another is busy: with no watch cache there are no
    bookmarks, so the informer's resourceVersion falls out of etcd's compacted history, and its next
    watch (the server ends each after 3 s here) is answered 410 Gone."""
    admin, namespace = forgetful
    busy = f"{namespace}-busy"
    await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": busy}})
    await create_all(admin, (configmap(f"cm-{i}", namespace, v="0") for i in range(5)))
    options = cache.ReflectorOptions(min_watch_timeout=3, max_watch_timeout=3)
    shared = new_cache(admin, namespaces=(namespace,), reflector=options)
    informer = await shared.get_informer(kinds.CONFIG_MAP)

    async def converged() -> bool:
        return cache_state(informer, namespace) == await server_state(admin, namespace)

    async with running(shared):
        await shared.wait_for_cache_sync(timeout=60)
        await admin.patch(kinds.CONFIG_MAP, "cm-0", {"data": {"v": "1"}}, namespace=namespace)
        await eventually(converged, what="the first change")

        async def relisted_after_410() -> bool:
            await admin.create(configmap(f"noise-{uuid.uuid4().hex[:8]}", busy))
            stats = informer.statistics().reflectors[0]
            return stats.expired >= 1 and stats.lists >= 2

        await eventually(
            relisted_after_410, what="a 410 Gone and the relist after it", timeout=90, interval=0.5
        )
        stats = informer.statistics().reflectors[0]
        await admin.patch(kinds.CONFIG_MAP, "cm-1", {"data": {"v": "after-410"}}, namespace=namespace)
        await eventually(converged, what="changes after the relist to reach the cache")
    assert stats.errors == 0  # a 410 is routine, not a failure
    assert informer.get("cm-1", namespace)["data"]["v"] == "after-410"  # type: ignore[index]
