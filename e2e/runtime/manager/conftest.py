"""Fixtures for the manager's e2e tests: an admin `Client` and managers run in the background."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest

from olm_runtime.client import Client, load_config
from olm_runtime.manager import Manager
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually


@pytest.fixture
async def client(control_plane: ControlPlane) -> AsyncIterator[Client]:
    """The cluster admin, loaded from the control plane's kubeconfig."""
    config = await load_config(kubeconfig=control_plane.kubeconfig)
    async with await Client.connect(config, field_manager="e2e-manager") as admin:
        yield admin


@pytest.fixture
async def running() -> AsyncIterator[Callable[[Manager], asyncio.Task[None]]]:
    """Start `manager.run()` in a task; every manager started is cancelled after the test."""
    tasks: list[asyncio.Task[None]] = []

    def start(manager: Manager) -> asyncio.Task[None]:
        tasks.append(asyncio.create_task(manager.run()))
        return tasks[-1]

    yield start
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def http_get(url: str, **kwargs: Any) -> tuple[int, str]:
    """Status and body of a GET; (0, error) when nothing answers."""
    try:
        async with aiohttp.ClientSession() as session, session.get(url, **kwargs) as response:
            return response.status, await response.text()
    except aiohttp.ClientError as e:
        return 0, str(e)


async def wait_ready(base: str, *, timeout: float = 60) -> None:
    async def ready() -> bool:
        status, _ = await http_get(f"{base}/readyz")
        return status == 200

    await eventually(ready, what=f"{base}/readyz to pass", timeout=timeout, interval=0.1)
