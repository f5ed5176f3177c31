"""A standby replica keeps warm informers and passes its probes, but runs no leader work until it
holds the Lease; then it reconciles at once from the cache it already has (docs/runtime/manager.md)."""

from __future__ import annotations

import asyncio
import datetime
import uuid
from collections.abc import Callable

from olm_runtime.cache import CacheOptions
from olm_runtime.client import Client, kinds
from olm_runtime.manager import Manager
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports

from ..reconcilers import add_config_map_controller, recording_names
from .conftest import http_get, wait_ready
from .election import electing_manager


def micro_time(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


async def test_a_standby_has_synced_informers_and_reconciles_as_soon_as_it_leads(
    client: Client, namespace: str, running: Callable[[Manager], asyncio.Task[None]]
) -> None:
    lease = f"lease-{uuid.uuid4().hex[:8]}"
    now = datetime.datetime.now(datetime.UTC)
    # Another replica holds the Lease for an hour: this one stays a standby until it is released.
    await client.create(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": lease, "namespace": namespace},
            "spec": {
                "holderIdentity": "other-replica",
                "leaseDurationSeconds": 3600,
                "acquireTime": micro_time(now),
                "renewTime": micro_time(now),
            },
        }
    )
    for index in range(5):
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{index}", "namespace": namespace},
            }
        )
    (probes,) = free_ports(1)
    manager = electing_manager(
        client,
        lease,
        namespace,
        identity="this-replica",
        health_probe_bind_address=f"127.0.0.1:{probes}",
        cache=CacheOptions(namespaces=(namespace,), gc_freeze=False),
    )
    reconciled: list[str] = []
    await add_config_map_controller(manager, "standby", recording_names(reconciled))
    running(manager)
    base = f"http://127.0.0.1:{probes}"
    await wait_ready(base)  # ready as a standby: caches synced, not leading
    informer = await manager.cache.get_informer(kinds.CONFIG_MAP)
    assert informer.has_synced
    assert {f"cm-{i}" for i in range(5)} <= {o["metadata"]["name"] for o in informer.list(namespace)}
    status, body = await http_get(f"{base}/healthz?verbose")
    assert status == 200, body
    assert not manager.elected.is_set()
    assert not manager.is_leader
    assert reconciled == [], "a standby reconciled"

    # The other replica steps down as a clean stop does: empty holder, one-second lease.
    held = await client.get(kinds.LEASE, lease, namespace=namespace)
    held["spec"].update({"holderIdentity": "", "leaseDurationSeconds": 1})
    await client.update(held)
    await asyncio.wait_for(manager.elected.wait(), 30)
    lists_at_election = informer.statistics().reflectors[0].lists

    async def reconciled_all() -> bool:
        return {f"cm-{i}" for i in range(5)} <= set(reconciled)

    await eventually(reconciled_all, what="the new leader to reconcile every object", timeout=30)
    assert informer.statistics().reflectors[0].lists == lists_at_election, "the leader listed again"
    lease_now = await client.get(kinds.LEASE, lease, namespace=namespace)
    assert lease_now["spec"]["holderIdentity"] == "this-replica"
    assert lease_now["spec"]["leaseTransitions"] == 1
