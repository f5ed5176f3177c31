"""The manager's lifecycle without a cluster: group order, failures, grace period, signals, probes.

Nothing here talks to an API server (no leader election, the cache is a stand-in with the three
methods the manager calls); leader election and real caches are covered in e2e/runtime/manager.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import aiohttp
import pytest

from olm_runtime.client import Client, RestConfig, Transport
from olm_runtime.events import BroadcasterOptions, EventBroadcaster
from olm_runtime.manager import (
    CacheSyncTimeout,
    GracefulShutdownTimeout,
    LeaderElectionOptions,
    Manager,
    ManagerOptions,
    WebhookOptions,
    runnable_from,
    webhook,
)
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports

Log = list[str]


class GatedCache:
    """Stands in for `cache.Cache`: syncs when the test says so."""

    name = "cache"

    def __init__(self, log: Log) -> None:
        self.log = log
        self.synced = asyncio.Event()

    async def start(self) -> None:
        await park(self.log, "cache")

    async def wait_for_cache_sync(self) -> None:
        await self.synced.wait()

    def readiness_problems(self) -> list[str]:
        return []


async def park(log: Log, name: str) -> None:
    log.append(f"start {name}")
    try:
        await asyncio.Event().wait()
    finally:
        log.append(f"stop {name}")


class Parked:
    def __init__(self, log: Log, name: str, *, needs_leader_election: bool = True) -> None:
        self.log = log
        self.name = name
        self.needs_leader_election = needs_leader_election

    async def start(self) -> None:
        await park(self.log, self.name)


def offline_client() -> Client:
    """A client for a server that does not exist; these tests never send a request."""
    return Client(Transport(RestConfig(server="https://127.0.0.1:1")))


def make(log: Log, **options: Any) -> tuple[Manager, GatedCache]:
    cache = GatedCache(log)
    settings: dict[str, Any] = {"metrics_bind_address": "0", **options}
    manager = Manager(offline_client(), options=ManagerOptions(**settings), cache=cache)  # type: ignore[arg-type]
    return manager, cache


async def probe_server_answers(session: aiohttp.ClientSession, url: str, status: int) -> None:
    """Wait until a GET of `url` answers `status`; until the server listens, connecting fails."""

    async def answers() -> bool:
        try:
            async with session.get(url) as response:
                return response.status == status
        except aiohttp.ClientConnectionError:
            return False

    await eventually(answers, what="the probe server", timeout=10, interval=0.05)


@pytest.fixture
async def background() -> AsyncIterator[Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]]]:
    tasks: list[asyncio.Task[None]] = []

    def spawn(coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        tasks.append(asyncio.create_task(coroutine))
        return tasks[-1]

    yield spawn
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_groups_start_in_order_and_stop_in_reverse(background: Any) -> None:
    log: Log = []
    manager, cache = make(log)
    manager.add(Parked(log, "leader-only"))
    manager.add(Parked(log, "everywhere", needs_leader_election=False))
    running = background(manager.run())
    await settle()
    assert log == ["start cache"], "nothing may start before the caches synced"
    assert not manager.elected.is_set()
    cache.synced.set()
    await asyncio.wait_for(manager.elected.wait(), 5)
    await settle()
    assert log == ["start cache", "start everywhere", "start leader-only"]
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert log[3:] == ["stop leader-only", "stop everywhere", "stop cache"]


async def test_a_runnable_added_while_running_starts_at_once(background: Any) -> None:
    log: Log = []
    manager, cache = make(log)
    cache.synced.set()
    background(manager.run())
    await asyncio.wait_for(manager.elected.wait(), 5)
    manager.add(runnable_from(lambda: park(log, "late"), name="late"))
    await eventually(lambda: _true("start late" in log), what="the late runnable to start", timeout=5)


async def _true(value: bool) -> bool:
    return value


async def test_a_failing_runnable_stops_everything_and_run_raises_its_error() -> None:
    log: Log = []
    manager, cache = make(log)
    cache.synced.set()
    manager.add(Parked(log, "bystander"))

    async def explode() -> None:
        await asyncio.sleep(0.01)
        raise ValueError("boom")

    manager.add(runnable_from(explode))
    with pytest.raises(ValueError, match="boom"):
        await asyncio.wait_for(manager.run(), 10)
    assert "stop bystander" in log
    assert "stop cache" in log


async def test_a_runnable_that_ignores_cancellation_runs_into_the_grace_period() -> None:
    log: Log = []
    manager, cache = make(log, graceful_shutdown_timeout=0.2)
    cache.synced.set()
    stubborn_stopped = asyncio.Event()

    async def stubborn() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            try:
                await asyncio.Event().wait()  # keeps "draining" until cancelled again
            finally:
                stubborn_stopped.set()

    manager.add(runnable_from(stubborn))
    running = asyncio.create_task(manager.run(handle_signals=True))
    await asyncio.wait_for(manager.elected.wait(), 5)
    os.kill(os.getpid(), signal.SIGTERM)
    with pytest.raises(GracefulShutdownTimeout):
        await asyncio.wait_for(running, 10)
    assert stubborn_stopped.is_set()


async def test_cancelling_run_wins_over_a_failure_during_the_stop() -> None:
    manager, cache = make([], graceful_shutdown_timeout=0.1)
    cache.synced.set()

    async def stubborn() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.Event().wait()

    manager.add(runnable_from(stubborn))
    running = asyncio.create_task(manager.run())
    await asyncio.wait_for(manager.elected.wait(), 5)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, 10)


async def test_caches_that_do_not_sync_in_time_fail_the_start() -> None:
    log: Log = []
    manager, _ = make(log, cache_sync_timeout=0.1)
    manager.add(Parked(log, "leader-only"))
    with pytest.raises(CacheSyncTimeout, match=r"0\.1s"):
        await asyncio.wait_for(manager.run(), 10)
    assert "start leader-only" not in log


async def test_sigterm_stops_the_manager_cleanly() -> None:
    log: Log = []
    manager, cache = make(log)
    cache.synced.set()
    manager.add(Parked(log, "worker"))
    running = asyncio.create_task(manager.run(handle_signals=True))
    await asyncio.wait_for(manager.elected.wait(), 5)
    os.kill(os.getpid(), signal.SIGTERM)
    await asyncio.wait_for(running, 10)  # a requested stop returns, it does not raise
    assert "stop worker" in log
    # The handlers are gone again: the loop's default behaviour is back.
    assert not asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)


async def test_probes_and_metrics_share_one_address_and_readiness_follows_the_caches(background: Any) -> None:
    log: Log = []
    (port,) = free_ports(1)
    address = f"127.0.0.1:{port}"
    manager, cache = make(log, metrics_bind_address=address, health_probe_bind_address=address)

    async def flaky() -> None:
        raise RuntimeError("not today")

    manager.add_health_check("extra", flaky)
    background(manager.run())
    base = f"http://{address}"
    async with aiohttp.ClientSession() as session:
        await probe_server_answers(session, f"{base}/readyz/cache-sync", 500)
        cache.synced.set()
        await asyncio.wait_for(manager.elected.wait(), 5)
        async with session.get(f"{base}/readyz?verbose") as response:
            assert response.status == 200
            assert "[+]cache-sync ok" in await response.text()
        async with session.get(f"{base}/healthz") as response:
            assert response.status == 500
            assert "[-]extra failed: not today" in await response.text()
        async with session.get(f"{base}/healthz/ping") as response:
            assert response.status == 200
        async with session.get(f"{base}/metrics") as response:
            assert response.status == 200
            assert response.headers["Content-Type"].startswith("text/plain")
            assert "process_cpu_seconds_total" in await response.text()


async def test_a_manager_runs_once_and_takes_no_runnables_after_it_stopped() -> None:
    log: Log = []
    manager, cache = make(log)
    cache.synced.set()
    running = asyncio.create_task(manager.run())
    await asyncio.wait_for(manager.elected.wait(), 5)
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    with pytest.raises(RuntimeError, match="only once"):
        await manager.run()
    with pytest.raises(RuntimeError, match="stopping"):
        manager.add(Parked(log, "late"))


def test_a_runnable_is_added_once() -> None:
    manager, _ = make([])
    worker = Parked([], "worker")
    manager.add(worker)
    with pytest.raises(ValueError, match="already added"):
        manager.add(worker)


def test_runnable_from_names_the_function_and_defaults_to_leader_only() -> None:
    async def sweep() -> None: ...

    wrapped = runnable_from(sweep)
    assert wrapped.name == "sweep"  # type: ignore[attr-defined]
    assert wrapped.needs_leader_election  # type: ignore[attr-defined]
    assert not runnable_from(sweep, needs_leader_election=False).needs_leader_election  # type: ignore[attr-defined]


async def test_a_leader_runnable_never_starts_before_the_lease_is_held_but_the_event_writer_does(
    background: Any,
) -> None:
    # The offline client can never read or write the Lease, so this replica stays a standby.
    log: Log = []
    manager, cache = make(
        log,
        leader_election=LeaderElectionOptions(lease_name="unit", namespace="ns", retry_period=0.5),
    )
    cache.synced.set()
    manager.add(Parked(log, "leader-only"))
    manager.add(Parked(log, "everywhere", needs_leader_election=False))
    recorder = manager.event_recorder("unit")
    background(manager.run())
    recorder.event(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}},
        "Normal",
        "Seen",
        "seen",
    )
    broadcaster = manager._broadcaster
    assert broadcaster is not None
    # The writer tried (and, offline, failed) to write the Event: it runs on this standby.
    await eventually(lambda: _true(broadcaster.failed == 1), what="the event writer to run", timeout=10)
    assert "start everywhere" in log
    assert "start cache" in log, "caches run on standbys too, so a new leader starts warm"
    assert "start leader-only" not in log
    assert not manager.elected.is_set()
    assert not manager.is_leader


class SlowCache(GatedCache):
    """Anything with `wait_for_cache_sync` counts as a cache, whatever its class."""

    name = "slow-cache"


async def test_a_runnable_with_wait_for_cache_sync_is_a_cache_that_leader_runnables_wait_for(
    background: Any,
) -> None:
    log: Log = []
    manager, cache = make(log)
    slow = SlowCache(log)
    manager.add(slow)
    manager.add(Parked(log, "leader-only"))
    cache.synced.set()
    background(manager.run())
    await eventually(lambda: _true(log.count("start cache") == 2), what="both caches to start", timeout=5)
    await settle()
    assert "start leader-only" not in log, "a leader runnable started before every cache synced"
    slow.synced.set()
    await asyncio.wait_for(manager.elected.wait(), 5)
    await eventually(lambda: _true("start leader-only" in log), what="the leader runnable", timeout=5)


async def test_a_runnable_that_returns_does_not_stop_the_manager(background: Any) -> None:
    log: Log = []
    manager, cache = make(log)
    cache.synced.set()
    finished = asyncio.Event()

    async def one_shot() -> None:
        finished.set()

    manager.add(runnable_from(one_shot))
    manager.add(Parked(log, "worker"))
    running = background(manager.run())
    await asyncio.wait_for(finished.wait(), 5)
    await eventually(lambda: _true("start worker" in log), what="the worker", timeout=5)
    await settle()
    assert not running.done()
    assert "stop worker" not in log


async def test_the_webhook_server_runs_only_when_a_handler_is_registered(tmp_path: Any) -> None:
    async def allow(request: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        return webhook.allowed()

    # No certificate anywhere: a webhook server that started would fail the manager.
    options = WebhookOptions(port=free_ports(1)[0], cert_dir=tmp_path)
    idle, cache = make([], webhook=options)
    cache.synced.set()
    assert idle.webhook_server.paths == []
    running = asyncio.create_task(idle.run())
    await asyncio.wait_for(idle.elected.wait(), 5)
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)

    serving, cache = make([], webhook=options)
    cache.synced.set()
    serving.webhook_server.register("/allow", allow)
    with pytest.raises(Exception, match=r"tls\.crt|No such file"):
        await asyncio.wait_for(serving.run(), 10)
    assert not serving.elected.is_set(), "caches and controllers start only after the webhook server"


async def test_a_second_signal_cuts_the_graceful_stop_short() -> None:
    log: Log = []
    manager, cache = make(log, graceful_shutdown_timeout=None)
    cache.synced.set()
    draining = asyncio.Event()

    async def slow_to_stop() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            draining.set()
            await asyncio.Event().wait()  # would drain for ever without a second cancellation

    manager.add(runnable_from(slow_to_stop))
    running = asyncio.create_task(manager.run(handle_signals=True))
    await asyncio.wait_for(manager.elected.wait(), 5)
    os.kill(os.getpid(), signal.SIGTERM)
    await asyncio.wait_for(draining.wait(), 5)
    assert not running.done()
    os.kill(os.getpid(), signal.SIGTERM)
    await asyncio.wait_for(running, 10)  # a requested stop returns, it does not raise


async def test_with_leader_election_both_probes_carry_a_leader_election_check(background: Any) -> None:
    (port,) = free_ports(1)
    manager, cache = make(
        [],
        health_probe_bind_address=f"127.0.0.1:{port}",
        leader_election=LeaderElectionOptions(lease_name="unit", namespace="ns"),
    )
    background(manager.run())
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as session:
        await probe_server_answers(session, f"{base}/healthz", 200)
        async with session.get(f"{base}/healthz?verbose") as response:
            assert "[+]leader-election ok" in await response.text()
        cache.synced.set()
        # A standby is healthy and ready: only an overdue leader fails the check.
        async with session.get(f"{base}/readyz/leader-election") as response:
            assert response.status == 200
        async with session.get(f"{base}/readyz/webhook") as response:
            assert response.status == 404, "no webhook check without webhooks"


@pytest.mark.parametrize("ending", ["signal", "failure"])
async def test_nothing_the_manager_started_is_left_running_after_run_ends(ending: str) -> None:
    log: Log = []
    manager, cache = make(log)
    cache.synced.set()
    before = asyncio.all_tasks()
    manager.add(Parked(log, "leader-only"))
    manager.add(Parked(log, "everywhere", needs_leader_election=False))

    async def fail_on_demand() -> None:
        await failing.wait()
        raise RuntimeError("asked to fail")

    failing = asyncio.Event()
    manager.add(runnable_from(fail_on_demand))
    running = asyncio.create_task(manager.run(handle_signals=True))
    await asyncio.wait_for(manager.elected.wait(), 5)
    assert len(asyncio.all_tasks() - before) > 3, "the runnables run in tasks of their own"
    if ending == "signal":
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(running, 10)
    else:
        failing.set()
        with pytest.raises(RuntimeError, match="asked to fail"):
            await asyncio.wait_for(running, 10)
    assert asyncio.all_tasks() - before == set()


async def test_every_recorder_of_a_manager_shares_one_buffer_and_one_writer() -> None:
    manager, _ = make([], events=BroadcasterOptions(buffer_size=1))
    first, second = manager.event_recorder("first"), manager.event_recorder("second")
    subject = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "ns"}}
    first.event(subject, "Normal", "Seen", "seen")
    second.event(subject, "Normal", "Seen", "seen")  # the shared buffer is full
    writers = [entry.runnable for entry in manager._entries if isinstance(entry.runnable, EventBroadcaster)]
    assert len(writers) == 1
    assert writers[0].dropped == 1


def test_without_leader_election_there_is_no_identity_and_no_leader() -> None:
    manager, _ = make([])
    assert manager.identity is None
    assert not manager.is_leader
    elected, _ = make(
        [], leader_election=LeaderElectionOptions(lease_name="unit", namespace="ns", identity="me")
    )
    assert elected.identity == "me"
    assert not elected.is_leader, "not leading before run() acquires the Lease"
