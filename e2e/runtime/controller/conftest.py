"""A Manager per test, watching only the test's namespace, run in the test's event loop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import pytest

from olm_runtime.cache import CacheOptions
from olm_runtime.client import Client
from olm_runtime.manager import Manager, ManagerOptions


@pytest.fixture
async def manager(admin_client: Client, namespace: str) -> Manager:
    options = ManagerOptions(metrics_bind_address="0", cache=CacheOptions(namespaces=(namespace,)))
    return Manager(admin_client, options=options)


@pytest.fixture
async def start(manager: Manager) -> AsyncIterator[Callable[[], None]]:
    """Call to run the manager (after adding controllers); it is stopped when the test ends."""
    tasks: list[asyncio.Task[None]] = []
    yield lambda: tasks.append(asyncio.create_task(manager.run()))
    for task in tasks:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
