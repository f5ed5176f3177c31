"""A kind the controller may not list is reported, not waited on forever."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from olm.operator_controller.clusterobjectset.watches import DriftWatches, WatchUnavailable
from olm_runtime.client import Client, kinds
from olm_runtime.controller import event
from olm_runtime.manager import Manager, ManagerOptions


async def test_an_informer_that_cannot_sync_fails_with_the_reason(
    admin_client: Client, namespace: str
) -> None:
    await admin_client.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "no-rights", "namespace": namespace},
        }
    )
    restricted = admin_client.for_service_account(namespace, "no-rights")
    manager = Manager(restricted, options=ManagerOptions(metrics_bind_address="0"))
    running = asyncio.create_task(manager.cache.start())
    try:
        watches = DriftWatches(manager.cache, asyncio.Queue[event.GenericEvent](), sync_timeout=3.0)
        with pytest.raises(WatchUnavailable) as raised:
            await watches.informer(kinds.CONFIG_MAP)
        assert "cannot watch ConfigMap.core: not synced after 3s" in str(raised.value)
        assert "forbidden" in str(raised.value).lower()
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
