"""When a leading manager stops, the Lease is released only after its leader runnables have ended,
and not at all if they did not end within the grace period (docs/runtime/manager.md)."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid

import pytest

from olm_runtime.client import Client, errors, kinds
from olm_runtime.manager import GracefulShutdownTimeout, runnable_from

from .election import electing_manager


async def holder(client: Client, namespace: str, lease: str) -> str:
    try:
        obj = await client.get(kinds.LEASE, lease, namespace=namespace)
    except errors.NotFound:
        return "<none>"
    return str((obj.get("spec") or {}).get("holderIdentity") or "")


async def test_the_lease_is_released_only_after_the_leader_runnables_have_stopped(
    client: Client, namespace: str
) -> None:
    lease = f"lease-{uuid.uuid4().hex[:8]}"
    manager = electing_manager(client, lease, namespace, identity="e2e-leader")
    holder_while_draining: list[str] = []

    async def leader_work() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            # Still draining: the Lease must still name this replica.
            holder_while_draining.append(await holder(client, namespace, lease))
            raise

    manager.add(runnable_from(leader_work))
    running = asyncio.create_task(manager.run())
    await asyncio.wait_for(manager.elected.wait(), 30)
    assert await holder(client, namespace, lease) == "e2e-leader"
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, 30)
    assert holder_while_draining == ["e2e-leader"]
    released = await client.get(kinds.LEASE, lease, namespace=namespace)
    assert released["spec"]["holderIdentity"] == ""
    assert released["spec"]["leaseDurationSeconds"] == 1, "released for the next standby to take at once"
    assert not manager.is_leader


async def test_the_lease_is_kept_when_the_leader_runnables_do_not_stop_within_the_grace_period(
    client: Client, namespace: str
) -> None:
    lease = f"lease-{uuid.uuid4().hex[:8]}"
    manager = electing_manager(client, lease, namespace, identity="e2e-leader", graceful_shutdown_timeout=0.5)
    draining = asyncio.Event()

    async def slow_to_stop() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            draining.set()
            await asyncio.Event().wait()  # ends only when cancelled a second time

    manager.add(runnable_from(slow_to_stop))
    running = asyncio.create_task(manager.run(handle_signals=True))
    await asyncio.wait_for(manager.elected.wait(), 30)
    os.kill(os.getpid(), signal.SIGTERM)  # a requested stop, as the kubelet asks for one
    with pytest.raises(GracefulShutdownTimeout):
        await asyncio.wait_for(running, 30)
    assert draining.is_set()
    # A standby must wait out the lease duration: the old work may still have been running.
    assert await holder(client, namespace, lease) == "e2e-leader"
