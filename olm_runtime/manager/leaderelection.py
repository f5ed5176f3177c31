"""Leader election on a `coordination.k8s.io/v1` Lease, with client-go's semantics.

Every candidate runs a `LeaderElector` on the same Lease. The holder writes `renewTime` every
`retry_period`; the others read the Lease every `retry_period` (jittered by up to 1.2x) and take it
over once they have seen no change to it for `lease_duration`. Time is measured locally: a candidate
trusts neither the holder's clock nor the timestamps in the Lease, only how long the record has stood
still on its own monotonic clock, so clock skew between machines does not matter (a clock that runs
at another *rate* would). Every write is optimistic (the Lease's resourceVersion), so of two
candidates that try at once, one wins and one gets a conflict.

The holder's loop:

- `acquire()` returns once this candidate holds the Lease;
- `hold()` renews every `retry_period` and raises `LeaderElectionLost` when no renewal has
  succeeded for `renew_deadline`, or as soon as another holder is seen; each API call is bounded by
  `max(renew_deadline / 2, 1 s)`, so one hung request cannot use up the whole deadline;
- `release()` hands the Lease over at once (empty holder, 1-second lease) for a clean shutdown.
  Call it only after all the work the Lease guards has stopped.

What is not promised: mutual exclusion. Between a holder missing its renew deadline and noticing it,
and between a standby's takeover and the old holder's next failed renewal, two replicas can both
believe they lead. Keep `renew_deadline` comfortably below `lease_duration` and make the guarded work
idempotent (level-based reconcilers are).

The gauge `leader_election_master_status{name}` is 1 while this process holds the Lease and 0
otherwise; `leader_election_slowpath_total{name}` counts renewals that had to read the Lease first.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import math
import random
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, Protocol, TypeVar

from prometheus_client import Counter, Gauge

from olm_runtime import clock as clocks
from olm_runtime import logging, metrics
from olm_runtime.client import Client, errors, kinds

__all__ = [
    "JITTER_FACTOR",
    "LeaderElectionLost",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "ResourceLock",
]

_log = logging.get_logger("olm_runtime.manager.leaderelection")
_T = TypeVar("_T")

JITTER_FACTOR = 1.2
"""A standby waits between `retry_period` and `(1 + JITTER_FACTOR) * retry_period` between attempts."""

MASTER_STATUS = Gauge(
    "leader_election_master_status",
    "1 while this process holds the named lease, 0 while it is a standby.",
    ("name",),
    registry=metrics.REGISTRY,
)
SLOWPATH = Counter(
    "leader_election_slowpath_total",
    "Lease renewals and acquisitions that had to read the lease before writing it.",
    ("name",),
    registry=metrics.REGISTRY,
)

_MICRO_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"
_EXPECTED = (errors.APIError, errors.TransportError, TimeoutError, OSError)


def _format_time(moment: datetime.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(datetime.UTC).strftime(_MICRO_TIME)


def _parse_time(value: Any) -> datetime.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value)
    except ValueError:
        return None


class LeaderElectionLost(Exception):
    """The holder could not renew the Lease in time, or saw another holder: stop leading now."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class LeaderElectionRecord:
    """The leader-election fields of `Lease.spec`."""

    holder_identity: str = ""
    """Who holds the lease; empty when released."""
    lease_duration_seconds: int = 0
    """How long, without a change to the record, before others may take the lease."""
    acquire_time: datetime.datetime | None = None
    """When the current holder acquired it."""
    renew_time: datetime.datetime | None = None
    """When the current holder last renewed it."""
    leader_transitions: int = 0
    """How many times the lease changed hands."""
    strategy: str | None = None
    """Coordinated leader election's strategy; kept as found."""
    preferred_holder: str | None = None
    """Coordinated leader election's preferred holder; kept as found."""

    @classmethod
    def from_lease_spec(cls, spec: dict[str, Any]) -> LeaderElectionRecord:
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=_parse_time(spec.get("acquireTime")),
            renew_time=_parse_time(spec.get("renewTime")),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
            strategy=spec.get("strategy"),
            preferred_holder=spec.get("preferredHolder"),
        )

    def to_lease_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": _format_time(self.acquire_time),
            "renewTime": _format_time(self.renew_time),
            "leaseTransitions": self.leader_transitions,
            "strategy": self.strategy,
            "preferredHolder": self.preferred_holder,
        }
        return {key: value for key, value in spec.items() if value is not None}


class ResourceLock(Protocol):
    """Where the record lives. `update` is optimistic: it fails with `errors.Conflict` if the
    object changed since this lock last read or wrote it."""

    @property
    def identity(self) -> str:
        """This candidate's identity, written as the holder."""

    def describe(self) -> str:
        """`namespace/name` of the lock, for logs and errors."""

    async def get(self) -> LeaderElectionRecord:
        """The stored record; `errors.NotFound` when the lock object does not exist."""

    async def create(self, record: LeaderElectionRecord) -> None:
        """Create the lock object holding `record`; `errors.AlreadyExists` if another candidate won."""

    async def update(self, record: LeaderElectionRecord) -> None:
        """Replace the record; `errors.Conflict` if the object changed since it was last seen."""


class LeaseLock:
    """A `ResourceLock` on a `coordination.k8s.io/v1` Lease."""

    def __init__(self, client: Client, *, namespace: str, name: str, identity: str) -> None:
        self._client = client
        self.namespace = namespace
        self.name = name
        self._identity = identity
        self._lease: dict[str, Any] | None = None

    @property
    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self) -> LeaderElectionRecord:
        self._lease = await self._client.get(kinds.LEASE, self.name, namespace=self.namespace)
        return LeaderElectionRecord.from_lease_spec(self._lease.get("spec") or {})

    async def create(self, record: LeaderElectionRecord) -> None:
        self._lease = await self._client.create(
            {
                "apiVersion": kinds.LEASE.api_version,
                "kind": kinds.LEASE.kind,
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": record.to_lease_spec(),
            }
        )

    async def update(self, record: LeaderElectionRecord) -> None:
        if self._lease is None:
            raise RuntimeError(f"lease {self.describe()} must be read or created before it is updated")
        self._lease = await self._client.update({**self._lease, "spec": record.to_lease_spec()})


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class LeaderElector:
    """One candidate's view of one lock; see the module docstring for the protocol.

    `clock` (monotonic, for every decision), `wall_clock` (only for the timestamps written into the
    record) and `rng` (the jitter) are seams for tests.
    """

    def __init__(
        self,
        lock: ResourceLock,
        *,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        name: str | None = None,
        clock: clocks.Clock = clocks.REAL,
        wall_clock: Callable[[], datetime.datetime] = _utc_now,
        rng: random.Random | None = None,
    ) -> None:
        if retry_period <= 0:
            raise ValueError("retry_period must be positive")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError(f"renew_deadline must be greater than {JITTER_FACTOR} x retry_period")
        if lease_duration <= renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        self.lock = lock
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.name = name if name is not None else lock.describe()
        self.request_timeout = max(renew_deadline / 2, 1.0)
        """Bound on each API call, so one hung request cannot use up the renew deadline."""
        self._clock = clock
        self._wall_clock = wall_clock
        self._rng = rng if rng is not None else random.Random()
        self._observed: LeaderElectionRecord | None = None
        self._observed_at = 0.0
        self._leading = False
        MASTER_STATUS.labels(self.name).set(0)

    @property
    def identity(self) -> str:
        return self.lock.identity

    @property
    def is_leader(self) -> bool:
        """True from a successful `acquire()` until the lease is lost or released."""
        return self._leading

    @property
    def observed_record(self) -> LeaderElectionRecord | None:
        """The record as last read or written by this candidate."""
        return self._observed

    async def acquire(self) -> None:
        """Return once this candidate holds the lease, trying every retry period (jittered)."""
        _log.info("waiting to acquire leader lease", lease=self.lock.describe(), identity=self.identity)
        while not await self._try_acquire_or_renew(self._clock.now() + self.request_timeout):
            jitter = 1.0 + self._rng.random() * JITTER_FACTOR
            await clocks.sleep(self._clock, self.retry_period * jitter)
        self._set_leading(True)
        record = self._observed
        _log.info(
            "acquired leader lease",
            lease=self.lock.describe(),
            identity=self.identity,
            transitions=record.leader_transitions if record else 0,
        )

    async def hold(self) -> NoReturn:
        """Renew every retry period while leading; raise `LeaderElectionLost` when that fails."""
        if not self._leading:
            raise RuntimeError("hold() needs the lease: call acquire() first")
        while True:
            deadline = self._clock.now() + self.renew_deadline
            while not await self._try_acquire_or_renew(deadline):
                if self._held_by_other():
                    self._lose(f"lease {self.lock.describe()} is now held by {self._holder()!r}")
                await self._clock.sleep_until(min(self._clock.now() + self.retry_period, deadline))
                if self._clock.now() >= deadline:
                    self._lose(
                        f"lease {self.lock.describe()} not renewed within the renew deadline "
                        f"({self.renew_deadline:g}s)"
                    )
            await clocks.sleep(self._clock, self.retry_period)

    async def release(self) -> bool:
        """Give the lease up at once if held; True if the release was written.

        Only safe once everything the lease guards has stopped."""
        if not self._leading or self._observed is None:
            return False
        self._set_leading(False)
        now = self._wall_clock()
        record = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=now,
            renew_time=now,
            leader_transitions=self._observed.leader_transitions,
            strategy=self._observed.strategy,
            preferred_holder=self._observed.preferred_holder,
        )
        try:
            await self._bounded(self.lock.update(record), self._clock.now() + self.request_timeout)
        except _EXPECTED as e:
            _log.warning("failed to release leader lease", lease=self.lock.describe(), error=str(e))
            return False
        self._observe(record)
        _log.info("released leader lease", lease=self.lock.describe(), identity=self.identity)
        return True

    def check(self, *, tolerance: float = 0.0) -> None:
        """Raise when leading but the last successful renewal is older than the lease duration (plus
        `tolerance`): the renew loop is stuck, and other candidates may have taken over."""
        if not self._leading:
            return
        age = self._clock.now() - self._observed_at
        if age > self.lease_duration + tolerance:
            raise LeaderElectionLost(
                f"leader lease {self.lock.describe()} last renewed {age:.1f}s ago "
                f"(lease duration {self.lease_duration:g}s)"
            )

    # internals ----------------------------------------------------------------------------------

    def _set_leading(self, leading: bool) -> None:
        self._leading = leading
        MASTER_STATUS.labels(self.name).set(1 if leading else 0)

    def _lose(self, reason: str) -> NoReturn:
        self._set_leading(False)
        _log.error("lost leader lease", lease=self.lock.describe(), identity=self.identity, reason=reason)
        raise LeaderElectionLost(reason)

    def _holder(self) -> str:
        return self._observed.holder_identity if self._observed else ""

    def _held_by_other(self) -> bool:
        holder = self._holder()
        return bool(holder) and holder != self.identity and self._observed_valid()

    def _observe(self, record: LeaderElectionRecord) -> None:
        self._observed = record
        self._observed_at = self._clock.now()

    def _observed_valid(self) -> bool:
        if self._observed is None:
            return False
        return self._observed_at + self._observed.lease_duration_seconds > self._clock.now()

    async def _bounded(self, call: Awaitable[_T], deadline: float) -> _T:
        remaining = min(self.request_timeout, deadline - self._clock.now())
        if remaining <= 0:
            raise TimeoutError("no time left before the deadline")
        async with asyncio.timeout(remaining):
            return await call

    async def _try_acquire_or_renew(self, deadline: float) -> bool:
        now = self._wall_clock()
        desired = LeaderElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=max(1, math.ceil(self.lease_duration)),
            acquire_time=now,
            renew_time=now,
        )
        observed = self._observed
        # Fast path: we hold a lease that has not run out, so write without reading first.
        if observed is not None and observed.holder_identity == self.identity and self._observed_valid():
            renewal = dataclasses.replace(
                desired,
                acquire_time=observed.acquire_time,
                leader_transitions=observed.leader_transitions,
                strategy=observed.strategy,
                preferred_holder=observed.preferred_holder,
            )
            try:
                await self._bounded(self.lock.update(renewal), deadline)
            except _EXPECTED as e:
                _log.info("leader lease fast-path renewal failed", lease=self.lock.describe(), error=str(e))
            else:
                self._observe(renewal)
                return True
        SLOWPATH.labels(self.name).inc()
        try:
            current = await self._bounded(self.lock.get(), deadline)
        except errors.NotFound:
            try:
                await self._bounded(self.lock.create(desired), deadline)
            except _EXPECTED as e:
                _log.info("creating leader lease failed", lease=self.lock.describe(), error=str(e))
                return False
            self._observe(desired)
            return True
        except _EXPECTED as e:
            _log.info("reading leader lease failed", lease=self.lock.describe(), error=str(e))
            return False
        if current != self._observed:
            self._observe(current)
        if self._held_by_other():
            return False
        if current.holder_identity == self.identity:
            record = dataclasses.replace(
                desired, acquire_time=current.acquire_time, leader_transitions=current.leader_transitions
            )
        else:
            record = dataclasses.replace(desired, leader_transitions=current.leader_transitions + 1)
        record = dataclasses.replace(
            record, strategy=current.strategy, preferred_holder=current.preferred_holder
        )
        try:
            await self._bounded(self.lock.update(record), deadline)
        except _EXPECTED as e:
            _log.info("updating leader lease failed", lease=self.lock.describe(), error=str(e))
            return False
        self._observe(record)
        return True
