"""Leader election as the manager's e2e tests run it, shared by the tests and the candidate process
(leader_candidate.py) that some of them start.

The timings are short so that a lost or released Lease changes hands within a test's patience.
"""

from __future__ import annotations

import asyncio
from typing import Any

from olm_runtime.client import Client
from olm_runtime.manager import LeaderElectionOptions, Manager, ManagerOptions, runnable_from

LEASE_DURATION = 6.0
RENEW_DEADLINE = 4.0
RETRY_PERIOD = 0.5


def electing_manager(
    client: Client, lease: str, namespace: str, *, identity: str | None = None, **options: Any
) -> Manager:
    """A manager that contends for the Lease `lease` in `namespace` with the short timings above;
    metrics on a free port unless `options` say otherwise."""
    settings: dict[str, Any] = {"metrics_bind_address": "0", **options}
    election = LeaderElectionOptions(
        lease_name=lease,
        namespace=namespace,
        identity=identity,
        lease_duration=LEASE_DURATION,
        renew_deadline=RENEW_DEADLINE,
        retry_period=RETRY_PERIOD,
    )
    return Manager(client, options=ManagerOptions(leader_election=election, **settings))


def add_leader_work(manager: Manager) -> asyncio.Event:
    """Add a leader runnable that waits until it is cancelled; the event is set once it has ended."""
    stopped = asyncio.Event()

    async def leader_work() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            stopped.set()

    manager.add(runnable_from(leader_work))
    return stopped
