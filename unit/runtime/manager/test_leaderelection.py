"""The Lease protocol's timing, driven by a fake clock over an in-memory lock.

The lock is the seam: a record with a version and optimistic updates, nothing more. The real Lease
is exercised in e2e/runtime/manager against the API server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from olm_runtime import clock
from olm_runtime.client import errors
from olm_runtime.manager import leaderelection
from olm_runtime.manager.leaderelection import LeaderElectionLost, LeaderElectionRecord, LeaderElector

LEASE = 15.0
RENEW = 10.0
RETRY = 2.0


@dataclasses.dataclass
class Stored:
    record: LeaderElectionRecord | None = None
    version: int = 0
    broken: bool = False
    gets: int = 0


class MemoryLock:
    """A `ResourceLock` on a shared `Stored`: `update` fails if the version moved since last seen."""

    def __init__(self, stored: Stored, identity: str) -> None:
        self.stored = stored
        self._identity = identity
        self._seen = -1

    @property
    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return "test/lease"

    def _check(self) -> None:
        if self.stored.broken:
            raise errors.ServiceUnavailable(503, "ServiceUnavailable", "down")

    async def get(self) -> LeaderElectionRecord:
        self._check()
        self.stored.gets += 1
        if self.stored.record is None:
            raise errors.NotFound(404, "NotFound", "no lease")
        self._seen = self.stored.version
        return self.stored.record

    async def create(self, record: LeaderElectionRecord) -> None:
        self._check()
        if self.stored.record is not None:
            raise errors.AlreadyExists(409, "AlreadyExists", "exists")
        self._write(record)

    async def update(self, record: LeaderElectionRecord) -> None:
        self._check()
        if self._seen != self.stored.version:
            raise errors.Conflict(409, "Conflict", "changed")
        self._write(record)

    def _write(self, record: LeaderElectionRecord) -> None:
        self.stored.record = record
        self.stored.version += 1
        self._seen = self.stored.version


class World:
    def __init__(self) -> None:
        self.clock = clock.FakeClock()
        self.stored = Stored()
        self.epoch = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)

    def wall(self) -> datetime.datetime:
        return self.epoch + datetime.timedelta(seconds=self.clock.now())

    def candidate(self, identity: str) -> LeaderElector:
        return LeaderElector(
            MemoryLock(self.stored, identity),
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
            name=f"lease-{identity}",
            clock=self.clock,
            wall_clock=self.wall,
            rng=random.Random(7),
        )

    async def advance(self, seconds: float, step: float = 0.1) -> None:
        """Move time in small steps, letting every task run between them."""
        target = self.clock.now() + seconds
        while self.clock.now() < target - 1e-9:
            self.clock.advance(min(step, target - self.clock.now()))
            for _ in range(10):
                await asyncio.sleep(0)

    @property
    def holder(self) -> str:
        return self.stored.record.holder_identity if self.stored.record else ""


@pytest.fixture
async def world() -> World:
    return World()


async def lead(elector: LeaderElector) -> None:
    await elector.acquire()
    await elector.hold()


@pytest.fixture
async def tasks() -> AsyncIterator[list[asyncio.Task[Any]]]:
    started: list[asyncio.Task[Any]] = []
    yield started
    for task in started:
        task.cancel()
    await asyncio.gather(*started, return_exceptions=True)


async def test_the_first_candidate_creates_the_lease_and_leads(world: World) -> None:
    a = world.candidate("a")
    await a.acquire()
    assert a.is_leader
    record = world.stored.record
    assert record is not None
    assert record.holder_identity == "a"
    assert record.lease_duration_seconds == 15
    assert record.leader_transitions == 0
    assert record.acquire_time == record.renew_time == world.epoch
    assert leaderelection.MASTER_STATUS.labels("lease-a")._value.get() == 1


async def test_a_standby_waits_while_the_leader_renews(world: World, tasks: list[asyncio.Task[Any]]) -> None:
    a, b = world.candidate("a"), world.candidate("b")
    tasks.append(asyncio.create_task(lead(a)))
    await world.advance(0.1)
    tasks.append(asyncio.create_task(b.acquire()))
    await world.advance(LEASE * 4)
    assert world.holder == "a"
    assert not b.is_leader
    assert not tasks[1].done()


async def test_a_standby_takes_over_a_lease_left_unrenewed_for_the_lease_duration(
    world: World, tasks: list[asyncio.Task[Any]]
) -> None:
    a, b = world.candidate("a"), world.candidate("b")
    await a.acquire()  # a acquires and then never renews: it has died
    standby = asyncio.create_task(b.acquire())
    tasks.append(standby)
    await world.advance(LEASE - 0.5)
    assert world.holder == "a", "taken over before the lease ran out"
    await world.advance(RETRY * (1 + leaderelection.JITTER_FACTOR) + 0.5)
    assert standby.done()
    assert world.holder == "b"
    record = world.stored.record
    assert record is not None
    assert record.leader_transitions == 1
    assert record.acquire_time is not None
    assert record.acquire_time > world.epoch  # a new term, not a's


async def test_a_released_lease_is_taken_at_the_next_retry(
    world: World, tasks: list[asyncio.Task[Any]]
) -> None:
    a, b = world.candidate("a"), world.candidate("b")
    leader = asyncio.create_task(lead(a))
    tasks.append(leader)
    await world.advance(0.1)
    standby = asyncio.create_task(b.acquire())
    tasks.append(standby)
    await world.advance(RETRY * 3)
    leader.cancel()
    await asyncio.gather(leader, return_exceptions=True)
    assert await a.release()
    assert world.holder == ""
    assert not a.is_leader
    released_at = world.clock.now()
    while not standby.done():
        await world.advance(0.1)
    assert world.holder == "b"
    assert world.clock.now() - released_at <= RETRY * (1 + leaderelection.JITTER_FACTOR) + 0.1


async def test_renewals_write_without_reading_first(world: World, tasks: list[asyncio.Task[Any]]) -> None:
    a = world.candidate("a")
    tasks.append(asyncio.create_task(lead(a)))
    await world.advance(0.1)
    gets = world.stored.gets
    versions = world.stored.version
    await world.advance(RETRY * 5)
    assert world.stored.version - versions >= 4  # one renewal per retry period
    assert world.stored.gets == gets


async def test_the_leader_gives_up_after_the_renew_deadline(world: World) -> None:
    a = world.candidate("a")
    await a.acquire()
    holding = asyncio.create_task(a.hold())
    await world.advance(RETRY + 0.1)
    world.stored.broken = True
    record = world.stored.record
    assert record is not None
    assert record.renew_time is not None
    last_renewal = (record.renew_time - world.epoch).total_seconds()
    while not holding.done():
        await world.advance(0.1)
    with pytest.raises(LeaderElectionLost, match="renew deadline"):
        holding.result()
    assert not a.is_leader
    given_up_after = world.clock.now() - last_renewal
    # The deadline counts from the first failed round, at most a retry period after the last success...
    assert RENEW <= given_up_after <= RENEW + RETRY + 0.3
    # ...and the leader stops before any standby may take over (the lease duration after that success).
    assert given_up_after < LEASE
    assert leaderelection.MASTER_STATUS.labels("lease-a")._value.get() == 0


async def test_the_leader_stops_at_once_when_another_holder_appears(world: World) -> None:
    a = world.candidate("a")
    await a.acquire()
    holding = asyncio.create_task(a.hold())
    await world.advance(0.1)
    record = world.stored.record
    assert record is not None
    world.stored.record = dataclasses.replace(record, holder_identity="intruder")
    world.stored.version += 1
    await world.advance(RETRY + 0.1)
    assert holding.done()
    with pytest.raises(LeaderElectionLost, match="intruder"):
        holding.result()


async def test_check_fails_only_for_a_leader_whose_renewals_are_overdue(world: World) -> None:
    a = world.candidate("a")
    a.check()  # not leading: healthy
    await a.acquire()
    a.check()
    world.clock.advance(LEASE + 1)  # nothing renewed meanwhile (hold() is not running)
    with pytest.raises(LeaderElectionLost, match="last renewed"):
        a.check()
    a.check(tolerance=5)


def test_the_record_maps_to_the_lease_spec_with_micro_times() -> None:
    moment = datetime.datetime(2026, 3, 4, 5, 6, 7, 890, tzinfo=datetime.UTC)
    record = LeaderElectionRecord(
        holder_identity="a",
        lease_duration_seconds=15,
        acquire_time=moment,
        renew_time=moment,
        leader_transitions=2,
    )
    spec = record.to_lease_spec()
    assert spec == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "acquireTime": "2026-03-04T05:06:07.000890Z",
        "renewTime": "2026-03-04T05:06:07.000890Z",
        "leaseTransitions": 2,
    }
    assert LeaderElectionRecord.from_lease_spec(spec) == record


@pytest.mark.parametrize(
    ("lease", "renew", "retry"),
    [
        pytest.param(10.0, 10.0, 2.0, id="renew-not-below-lease"),
        pytest.param(15.0, 2.4, 2.0, id="renew-not-above-jittered-retry"),
        pytest.param(15.0, 10.0, 0.0, id="retry-not-positive"),
    ],
)
def test_durations_must_nest(lease: float, renew: float, retry: float) -> None:
    with pytest.raises(ValueError, match="must be"):
        LeaderElector(
            MemoryLock(Stored(), "a"), lease_duration=lease, renew_deadline=renew, retry_period=retry
        )
