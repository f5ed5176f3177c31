"""The Lease protocol's timing, driven by a fake clock over an in-memory lock.

The lock is the seam: a record with a version and optimistic updates, nothing more. The real Lease
is exercised in e2e/runtime/manager against the API server.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import itertools
import random
from collections.abc import AsyncIterator, Callable
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

    def candidate(
        self,
        identity: str,
        *,
        lock: MemoryLock | None = None,
        wall_clock: Callable[[], datetime.datetime] | None = None,
        seed: int = 7,
    ) -> LeaderElector:
        """An elector on this world's Lease and clock; a lock of another kind over `stored`, a skewed
        wall clock or another jitter seed where a test needs one."""
        return LeaderElector(
            lock or MemoryLock(self.stored, identity),
            lease_duration=LEASE,
            renew_deadline=RENEW,
            retry_period=RETRY,
            name=f"lease-{identity}",
            clock=self.clock,
            wall_clock=wall_clock or self.wall,
            rng=random.Random(seed),
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


class InterleavingLock(MemoryLock):
    """Yields to the event loop between reading and writing, as a real API round trip does, so two
    candidates can both read the same version before either writes."""

    async def update(self, record: LeaderElectionRecord) -> None:
        await asyncio.sleep(0)
        await super().update(record)


async def test_of_two_standbys_taking_over_at_the_same_moment_one_wins_and_the_other_waits(
    world: World, tasks: list[asyncio.Task[Any]]
) -> None:
    old = world.candidate("old")
    await old.acquire()  # and then dies without renewing

    def standby(identity: str) -> LeaderElector:
        # The same seed gives both the same jitter: they try at exactly the same fake instants.
        return world.candidate(identity, lock=InterleavingLock(world.stored, identity))

    b, c = standby("b"), standby("c")
    tasks.extend([asyncio.create_task(b.acquire()), asyncio.create_task(c.acquire())])
    version_before = world.stored.version
    await world.advance(LEASE + RETRY * (1 + leaderelection.JITTER_FACTOR) + 1)
    assert [b.is_leader, c.is_leader].count(True) == 1
    assert world.holder in {"b", "c"}
    record = world.stored.record
    assert record is not None
    assert record.leader_transitions == 1, "the lease changed hands once"
    assert world.stored.version == version_before + 1, "the loser's write was refused"


async def test_skewed_wall_clocks_neither_hasten_nor_delay_a_takeover(
    world: World, tasks: list[asyncio.Task[Any]]
) -> None:
    a = world.candidate("a")
    tasks.append(asyncio.create_task(lead(a)))
    await world.advance(0.1)
    # b's wall clock is a day ahead: the leader's renewTime looks a day old to it.
    skewed = world.candidate("b", wall_clock=lambda: world.wall() + datetime.timedelta(days=1))
    standby = asyncio.create_task(skewed.acquire())
    tasks.append(standby)
    await world.advance(LEASE * 3)
    assert world.holder == "a", "a skewed clock made a live lease look expired"
    tasks[0].cancel()  # the leader dies; its last renewal is at most a retry period old
    await asyncio.gather(tasks[0], return_exceptions=True)
    died_at = world.clock.now()
    while not standby.done():
        await world.advance(0.1)
    waited = world.clock.now() - died_at
    # The standby may have seen the last renewal up to one jittered retry late, and takes over up to
    # one jittered retry after the lease duration ran out from there.
    jittered = RETRY * (1 + leaderelection.JITTER_FACTOR)
    assert LEASE - RETRY <= waited <= LEASE + 2 * jittered + 0.2


async def test_the_slow_path_counter_counts_only_writes_that_had_to_read_the_lease(
    world: World, tasks: list[asyncio.Task[Any]]
) -> None:
    a = world.candidate("a")
    slow = leaderelection.SLOWPATH.labels("lease-a")
    before = slow._value.get()
    tasks.append(asyncio.create_task(lead(a)))
    await world.advance(0.1)
    assert slow._value.get() == before + 1, "acquiring reads the lease (and finds none)"
    await world.advance(RETRY * 5)
    assert slow._value.get() == before + 1, "plain renewals write without reading"
    world.stored.version += 1  # someone else touched the Lease: the blind renewal conflicts
    await world.advance(RETRY + 0.1)
    assert slow._value.get() == before + 2
    assert world.holder == "a"


async def test_release_hands_over_with_an_empty_holder_and_a_one_second_lease(world: World) -> None:
    a = world.candidate("a")
    assert not await a.release(), "nothing to release before leading"
    assert world.stored.record is None
    await a.acquire()
    assert await a.release()
    record = world.stored.record
    assert record is not None
    assert (record.holder_identity, record.lease_duration_seconds, record.leader_transitions) == ("", 1, 0)
    assert not await a.release(), "released once"


class HangingLock(MemoryLock):
    def __init__(self, stored: Stored, identity: str) -> None:
        super().__init__(stored, identity)
        self.cancelled = asyncio.Event()

    async def get(self) -> LeaderElectionRecord:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")


async def test_a_hung_api_call_is_cut_off_after_its_request_timeout(tasks: list[asyncio.Task[Any]]) -> None:
    assert LeaderElector(MemoryLock(Stored(), "a")).request_timeout == 5.0  # renew_deadline / 2
    lock = HangingLock(Stored(), "a")
    # Short durations make the bound its floor of one second, on the real clock the bound uses.
    elector = LeaderElector(lock, lease_duration=0.5, renew_deadline=0.3, retry_period=0.1)
    assert elector.request_timeout == 1.0
    tasks.append(asyncio.create_task(elector.acquire()))
    await asyncio.wait_for(lock.cancelled.wait(), 10)
    assert not elector.is_leader


class ReadTimes(MemoryLock):
    """Remembers when (on the fake clock) the candidate read the Lease."""

    def __init__(self, stored: Stored, identity: str, clock: clock.FakeClock) -> None:
        super().__init__(stored, identity)
        self.clock = clock
        self.reads: list[float] = []

    async def get(self) -> LeaderElectionRecord:
        self.reads.append(self.clock.now())
        return await super().get()


async def test_a_standby_checks_every_retry_period_stretched_by_up_to_the_jitter_factor(
    world: World, tasks: list[asyncio.Task[Any]]
) -> None:
    tasks.append(asyncio.create_task(lead(world.candidate("a"))))
    await world.advance(0.1)
    lock = ReadTimes(world.stored, "b", world.clock)
    standby = world.candidate("b", lock=lock, seed=11)
    tasks.append(asyncio.create_task(standby.acquire()))
    await world.advance(RETRY * 40, step=0.01)
    gaps = [b - a for a, b in itertools.pairwise(lock.reads)]
    assert len(gaps) >= 15
    longest = RETRY * (1 + leaderelection.JITTER_FACTOR)
    assert all(RETRY - 1e-6 <= gap <= longest + 0.02 for gap in gaps), gaps
    assert max(gaps) - min(gaps) > RETRY * 0.5, "the waits are jittered, not all alike"
    assert not standby.is_leader
