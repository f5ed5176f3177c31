"""Managers in separate processes contend for one Lease on the real API server.

One leads and runs the leader runnable; SIGKILL of the leader hands the Lease to a standby within
the lease duration (plus one jittered retry); SIGTERM hands it over at once, because the stopping
leader releases it after its leader runnables ended.
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from olm_runtime.client import Client, errors, kinds
from olm_runtime.manager import LeaderElectionLost
from olm_runtime.manager.leaderelection import JITTER_FACTOR
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports

from . import election
from .conftest import http_get, wait_ready

REPO = Path(__file__).resolve().parents[3]
LEASE = election.LEASE_DURATION
RETRY = election.RETRY_PERIOD
# A standby takes over once it has seen no renewal for the lease duration, checking every retry
# period stretched by up to the jitter factor; allow for the API round trips on top.
TAKEOVER_BOUND = LEASE + RETRY * (1 + JITTER_FACTOR) + 1.0


@dataclasses.dataclass
class Candidate:
    identity: str
    process: subprocess.Popen[bytes]
    metrics: str
    probes: str
    log: Path

    async def master_status(self, lease: str) -> float | None:
        status, text = await http_get(f"{self.metrics}/metrics")
        if status != 200:
            return None
        for family in text_string_to_metric_families(text):
            if family.name == "leader_election_master_status":
                for sample in family.samples:
                    if sample.labels.get("name") == lease:
                        return sample.value
        return None


@pytest.fixture
def lease() -> str:
    return f"lease-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def candidates(
    control_plane: ControlPlane, namespace: str, lease: str, tmp_path: Path
) -> Iterator[Callable[[str], Candidate]]:
    started: list[Candidate] = []

    def start(identity: str) -> Candidate:
        metrics, probes = free_ports(2)
        log = tmp_path / f"{identity}.log"
        with log.open("wb") as output:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "e2e.runtime.manager.leader_candidate",
                    str(control_plane.kubeconfig),
                    namespace,
                    lease,
                    identity,
                    str(metrics),
                    str(probes),
                ],
                cwd=REPO,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        candidate = Candidate(
            identity, process, f"http://127.0.0.1:{metrics}", f"http://127.0.0.1:{probes}", log
        )
        started.append(candidate)
        return candidate

    yield start
    for candidate in started:
        if candidate.process.poll() is None:
            candidate.process.kill()
        candidate.process.wait()


async def lease_spec(client: Client, namespace: str, lease: str) -> dict[str, object]:
    try:
        obj = await client.get(kinds.LEASE, lease, namespace=namespace)
    except errors.NotFound:
        return {}
    spec: dict[str, object] = obj.get("spec") or {}
    return spec


async def leader_runnable_holder(client: Client, namespace: str, lease: str) -> str:
    try:
        obj = await client.get(kinds.CONFIG_MAP, lease, namespace=namespace)
    except errors.NotFound:
        return ""
    return str((obj.get("data") or {}).get("leader", ""))


async def test_one_leads_a_killed_leader_is_replaced_and_a_stopped_one_hands_over_at_once(
    client: Client, namespace: str, lease: str, candidates: Callable[[str], Candidate]
) -> None:
    a, b = candidates("replica-a"), candidates("replica-b")
    by_identity = {c.identity: c for c in (a, b)}
    await wait_ready(a.probes)
    await wait_ready(b.probes)

    async def one_leads() -> bool:
        holder = (await lease_spec(client, namespace, lease)).get("holderIdentity")
        return holder in by_identity and await leader_runnable_holder(client, namespace, lease) == holder

    await eventually(one_leads, what="one replica to lead and run the leader runnable", timeout=30)
    spec = await lease_spec(client, namespace, lease)
    leader = by_identity[str(spec["holderIdentity"])]
    standby = b if leader is a else a
    assert spec["leaseDurationSeconds"] == int(LEASE)
    assert str(spec["renewTime"]).endswith("Z")
    assert "." in str(spec["renewTime"])  # MicroTime: microseconds

    async def statuses_known() -> bool:
        return (await leader.master_status(lease), await standby.master_status(lease)) == (1.0, 0.0)

    await eventually(statuses_known, what="leader_election_master_status 1 on the leader, 0 on the standby")

    # SIGKILL: nothing is released; the standby waits out the lease duration.
    leader.process.send_signal(signal.SIGKILL)
    killed_at = time.monotonic()

    async def standby_holds() -> bool:
        return (await lease_spec(client, namespace, lease)).get("holderIdentity") == standby.identity

    await eventually(
        standby_holds, what="the standby to take the lease", timeout=TAKEOVER_BOUND, interval=0.05
    )
    takeover = time.monotonic() - killed_at
    spec = await lease_spec(client, namespace, lease)
    assert spec["leaseTransitions"] == 1

    async def standby_runs_leader_work() -> bool:
        return await leader_runnable_holder(client, namespace, lease) == standby.identity

    await eventually(standby_runs_leader_work, what="the new leader to run the leader runnable", timeout=10)

    # SIGTERM: the leader stops its leader runnables, releases the lease, and a third replica takes
    # it at its next retry instead of after the lease duration.
    third = candidates("replica-c")
    await wait_ready(third.probes)
    standby.process.send_signal(signal.SIGTERM)
    stopped_at = time.monotonic()

    async def third_holds() -> bool:
        return (await lease_spec(client, namespace, lease)).get("holderIdentity") == third.identity

    await eventually(
        third_holds, what="a hand-over well before the lease ran out", timeout=LEASE / 2, interval=0.05
    )
    handover = time.monotonic() - stopped_at
    assert standby.process.wait(timeout=30) == 0, standby.log.read_text()
    assert (await lease_spec(client, namespace, lease))["leaseTransitions"] == 2
    print(f"\nhand-over after SIGKILL: {takeover:.2f}s; after SIGTERM: {handover:.2f}s (lease {LEASE:g}s)")


async def test_a_leader_that_sees_another_holder_stops_its_leader_work_and_run_raises(
    client: Client, namespace: str, lease: str
) -> None:
    manager = election.electing_manager(client, lease, namespace)
    leader_work_stopped = election.add_leader_work(manager)
    running = asyncio.create_task(manager.run())
    try:
        await asyncio.wait_for(manager.elected.wait(), 30)

        async def taken_by_force() -> bool:
            obj = await client.get(kinds.LEASE, lease, namespace=namespace)
            obj["spec"]["holderIdentity"] = "intruder"
            obj["spec"]["leaseDurationSeconds"] = 3600
            try:
                await client.update(obj)
            except errors.Conflict:  # a renewal got in between: read again
                return False
            return True

        await eventually(taken_by_force, what="another holder to take the lease", timeout=10, interval=0.05)
        with pytest.raises(LeaderElectionLost, match="intruder"):
            await asyncio.wait_for(running, 30)
    finally:
        running.cancel()
    assert leader_work_stopped.is_set()
    assert not manager.is_leader
    assert (await lease_spec(client, namespace, lease))["holderIdentity"] == "intruder", "nothing released"
