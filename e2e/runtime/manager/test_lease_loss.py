"""A leader whose renewals start failing gives up within the renew deadline: its leader runnables are
cancelled and `run()` raises `LeaderElectionLost`, before a standby could take the Lease over."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from olm_runtime.client import Client, kinds
from olm_runtime.manager import LeaderElectionLost
from olm_runtime.testing import settle

from .election import LEASE_DURATION, RENEW_DEADLINE, add_leader_work, electing_manager


async def grant_lease_access(client: Client, namespace: str, account: str) -> None:
    await client.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": namespace}}
    )
    await client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": account, "namespace": namespace},
            "rules": [
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "verbs": ["get", "create", "update"],
                }
            ],
        }
    )
    await client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": account, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": account},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }
    )


async def test_a_leader_that_cannot_renew_gives_up_within_the_renew_deadline(
    client: Client, namespace: str
) -> None:
    account = "elector"
    lease = f"lease-{uuid.uuid4().hex[:8]}"
    await grant_lease_access(client, namespace, account)
    elector = client.for_service_account(namespace, account)
    manager = electing_manager(
        elector,
        lease,
        namespace,
        identity="losing-replica",
        graceful_shutdown_timeout=60,  # losing the Lease must not wait for this
    )
    leader_work_stopped = add_leader_work(manager)
    running = asyncio.create_task(manager.run())
    try:
        await asyncio.wait_for(manager.elected.wait(), 30)
        assert manager.is_leader
        await client.delete(kinds.ROLE_BINDING, account, namespace=namespace)
        # Renewals are forbidden once the API server's authorizer has seen the deletion, a moment
        # after it: the bound below is about the elector, so it counts from the first refusal.
        await settle.denied(
            client,
            settle.service_account(namespace, account),
            verb="update",
            group="coordination.k8s.io",
            resource="leases",
            namespace=namespace,
            name=lease,
        )
        revoked_at = time.monotonic()
        with pytest.raises(LeaderElectionLost, match="renew deadline"):
            await asyncio.wait_for(running, 30)
        gave_up_after = time.monotonic() - revoked_at
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
    assert leader_work_stopped.is_set()
    assert not manager.is_leader
    # Renewals fail from the first round after the refusal; the deadline counts from there (the
    # refusal is seen within one poll of settle's, 0.2 s, well inside the 0.5 s allowed below).
    assert RENEW_DEADLINE - 0.5 <= gave_up_after < LEASE_DURATION, gave_up_after
    stored = await client.get(kinds.LEASE, lease, namespace=namespace)
    assert stored["spec"]["holderIdentity"] == "losing-replica", "a lost Lease is not released"
