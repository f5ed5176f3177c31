"""Fixtures and helpers for the cache's e2e tests: an admin client, a running cache, bulk writes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import pytest

from olm_runtime import cache
from olm_runtime.client import Client, kinds, load_config
from olm_runtime.testing.controlplane import ControlPlane


async def connect(kubeconfig: Path) -> Client:
    return await Client.connect(await load_config(kubeconfig=kubeconfig), field_manager="cache-e2e")


@pytest.fixture
async def admin(control_plane: ControlPlane) -> AsyncIterator[Client]:
    """The cluster admin of the shared control plane."""
    async with await connect(control_plane.kubeconfig) as client:
        yield client


def new_cache(client: Client, **options: Any) -> cache.Cache:
    """A cache on the client's transport and discovery; never freezes the test process's collector."""
    options.setdefault("gc_freeze", False)
    return cache.Cache(client.transport, client.mapper, cache.CacheOptions(**options))


@contextlib.asynccontextmanager
async def running(shared: cache.Cache) -> AsyncIterator[cache.Cache]:
    """Run `shared.start()` for the body of a `with` block, then cancel it."""
    task = asyncio.create_task(shared.start())
    try:
        yield shared
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def configmap(name: str, namespace: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


async def create_all(client: Client, objects: Iterable[dict[str, Any]], *, parallel: int = 32) -> None:
    """Create many objects, `parallel` requests at a time."""
    limit = asyncio.Semaphore(parallel)

    async def one(obj: dict[str, Any]) -> None:
        async with limit:
            await client.create(obj)

    async with asyncio.TaskGroup() as tasks:
        for obj in objects:
            tasks.create_task(one(obj))


async def server_state(client: Client, namespace: str) -> dict[str, str]:
    """name -> resourceVersion of every ConfigMap in the namespace, read fresh from the server."""
    listed = await client.list(kinds.CONFIG_MAP, namespace=namespace)
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in listed.items}


def cache_state(informer: cache.Informer, namespace: str) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in informer.list(namespace)}
