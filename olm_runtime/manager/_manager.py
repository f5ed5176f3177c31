"""The Manager: runs a process's runnables in order, elects a leader, serves probes and metrics."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import signal
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from olm_runtime import cache as caches
from olm_runtime import events, logging, metrics
from olm_runtime.client import Client
from olm_runtime.manager import _http, _metrics_auth, health
from olm_runtime.manager.leaderelection import LeaderElectionLost, LeaderElector, LeaseLock
from olm_runtime.manager.options import ManagerOptions, default_identity
from olm_runtime.manager.runnable import Runnable, name_of, needs_leader_election, runnable_from
from olm_runtime.manager.webhook import WebhookServer

__all__ = ["CacheSyncTimeout", "GracefulShutdownTimeout", "Manager"]

_log = logging.get_logger("olm_runtime.manager")
_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class CacheSyncTimeout(Exception):
    """The caches did not sync within `ManagerOptions.cache_sync_timeout`."""


class GracefulShutdownTimeout(Exception):
    """Some runnables had not stopped when `ManagerOptions.graceful_shutdown_timeout` ran out."""


class _Group(enum.IntEnum):
    """Runnable groups, in start order; they stop in the reverse order."""

    HTTP_SERVERS = 0
    WEBHOOKS = 1
    CACHES = 2
    OTHERS = 3
    LEADER_ELECTION = 4


class _State(enum.Enum):
    NEW = "new"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"


@dataclasses.dataclass(eq=False)
class _Entry:
    runnable: Runnable
    name: str
    group: _Group
    ready: Callable[[], Awaitable[Any]] | None
    task: asyncio.Task[None] | None = None


class Manager:
    """Runs caches, controllers and servers for one process; see the package docstring for the
    order of things and what is promised.

    `client` writes to and reads from the API server; `cache` holds the shared informers (built
    from `options.cache` unless given); `reader` serves reads from that cache (stale, shared: see
    `cache.CacheReader`). `elected` is set once this replica may run leader runnables (at once when
    leader election is off).
    """

    def __init__(
        self, client: Client, *, options: ManagerOptions | None = None, cache: caches.Cache | None = None
    ) -> None:
        self.client = client
        self.options = options if options is not None else ManagerOptions()
        self.cache = (
            cache if cache is not None else caches.Cache(client.transport, client.mapper, self.options.cache)
        )
        self.reader = caches.CacheReader(self.cache)
        self.elected = asyncio.Event()
        self._entries: list[_Entry] = []
        self._started: set[_Group] = set()
        self._state = _State.NEW
        self._group: asyncio.TaskGroup | None = None
        self._stop = asyncio.Event()
        self._failure: BaseException | None = None
        self._caches_synced = False
        self._healthz = health.Checks("healthz")
        self._readyz = health.Checks("readyz")
        self._webhook_server: WebhookServer | None = None
        self._broadcaster: events.EventBroadcaster | None = None
        self._elector: LeaderElector | None = None
        self._elector_task: asyncio.Task[None] | None = None
        self._healthz.add("ping", health.ping)
        self._readyz.add("cache-sync", self._check_caches)
        if (election := self.options.leader_election) is not None:
            lock = LeaseLock(
                client,
                namespace=election.resolved_namespace(),
                name=election.lease_name,
                identity=election.identity or default_identity(),
            )
            self._elector = LeaderElector(
                lock,
                lease_duration=election.lease_duration,
                renew_deadline=election.renew_deadline,
                retry_period=election.retry_period,
                name=election.lease_name,
            )
            self._healthz.add("leader-election", self._check_leader_election)
            self._readyz.add("leader-election", self._check_leader_election)
        self.add(self.cache)

    # wiring -------------------------------------------------------------------------------------

    @property
    def identity(self) -> str | None:
        """This replica's leader-election identity, or None without leader election."""
        return self._elector.identity if self._elector is not None else None

    @property
    def is_leader(self) -> bool:
        """True while this replica holds the lease (always False without leader election)."""
        return self._elector is not None and self._elector.is_leader

    def add(self, runnable: Runnable) -> None:
        """Run `runnable` with the others. Its group follows from what it is: a cache (it has
        `wait_for_cache_sync`) starts with the caches; otherwise `needs_leader_election` (default True)
        picks leader-only or every replica. Added while running, it starts at once if its group has."""
        if self._state in (_State.STOPPING, _State.STOPPED):
            raise RuntimeError("the manager is stopping; it takes no more runnables")
        if any(entry.runnable is runnable for entry in self._entries):
            raise ValueError(f"runnable {name_of(runnable)} was already added")
        entry = _Entry(runnable, name_of(runnable), *self._classify(runnable))
        self._entries.append(entry)
        if entry.group in self._started:
            self._launch(entry)

    @staticmethod
    def _classify(runnable: Runnable) -> tuple[_Group, Callable[[], Awaitable[Any]] | None]:
        if isinstance(runnable, _http.Server):
            return _Group.HTTP_SERVERS, runnable.wait_started
        if isinstance(runnable, WebhookServer):
            return _Group.WEBHOOKS, runnable.wait_started
        wait_for_cache_sync = getattr(runnable, "wait_for_cache_sync", None)
        if callable(wait_for_cache_sync):
            return _Group.CACHES, wait_for_cache_sync
        if needs_leader_election(runnable):
            return _Group.LEADER_ELECTION, None
        return _Group.OTHERS, None

    def add_health_check(self, name: str, check: health.Check) -> None:
        """Serve `check` on `/healthz` (and `/healthz/<name>`); a failing liveness probe restarts the Pod."""
        self._healthz.add(name, check)

    def add_ready_check(self, name: str, check: health.Check) -> None:
        """Serve `check` on `/readyz` (and `/readyz/<name>`); a failing one takes the Pod out of Services."""
        self._readyz.add(name, check)

    def event_recorder(self, component: str) -> events.EventRecorder:
        """A recorder reporting as `component`; all recorders share one buffer and one writer, which
        runs on every replica."""
        if self._broadcaster is None:
            self._broadcaster = events.EventBroadcaster(self.client, options=self.options.events)
            self.add(self._broadcaster)
        return self._broadcaster.recorder(component)

    @property
    def webhook_server(self) -> WebhookServer:
        """The admission webhook server (created on first use with `options.webhook`). It runs only
        if a handler is registered by the time `run()` starts."""
        if self._webhook_server is None:
            self._webhook_server = WebhookServer(self.options.webhook)
        return self._webhook_server

    # checks -------------------------------------------------------------------------------------

    async def _check_caches(self) -> None:
        if not self._caches_synced:
            raise RuntimeError("caches not synced yet")
        problems = self.cache.readiness_problems()
        if problems:
            raise RuntimeError("; ".join(problems))

    async def _check_leader_election(self) -> None:
        if self._elector is not None:
            self._elector.check()

    async def _serve_metrics(self, _: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(metrics.REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    def _metrics_tls(self) -> ssl.SSLContext | None:
        """The secure metrics listener's TLS context (None for plain HTTP). Certificate files are
        read now, so a missing or bad pair fails `run()` at once, and watched from then on."""
        secure = self.options.metrics_secure
        if secure is None:
            return None
        if secure.cert_dir is None:
            # Imported here: cryptography adds ~9 MiB to every manager that never makes a certificate.
            from olm_runtime.manager import certificates  # noqa: PLC0415

            return certificates.self_signed_context(secure.tls_profile)
        watcher = secure.watcher()
        watcher.load()
        self.add(runnable_from(watcher.start, needs_leader_election=False, name="metrics-certwatcher"))
        return watcher.server_context()

    def _add_servers(self) -> None:
        metrics_address = _http.parse_bind_address(self.options.metrics_bind_address)
        probe_address = _http.parse_bind_address(self.options.health_probe_bind_address)
        apps: dict[tuple[str | None, int], web.Application] = {}
        tls: ssl.SSLContext | None = None
        if metrics_address is not None:
            tls = self._metrics_tls()
            # The filter guards every path of the listener, as controller-runtime's does: an
            # unauthorized caller learns nothing, not even which paths exist.
            middlewares = [] if tls is None else [_metrics_auth.MetricsAuth(self.client).middleware]
            apps[metrics_address] = web.Application(middlewares=middlewares)
            apps[metrics_address].router.add_get("/metrics", self._serve_metrics)
        if probe_address is not None:
            app = apps.setdefault(probe_address, web.Application())
            self._healthz.install(app)
            self._readyz.install(app)
        for (host, port), app in apps.items():
            if (host, port) == metrics_address:
                self.add(_http.Server("metrics", app, host, port, ssl_context=tls, shutdown_timeout=1.0))
            else:
                self.add(_http.Server("probes", app, host, port, shutdown_timeout=1.0))
        if self._webhook_server is not None and self._webhook_server.paths:
            self._readyz.add("webhook", self._webhook_server.started_check)
            self.add(self._webhook_server)

    # running ------------------------------------------------------------------------------------

    async def run(self, *, handle_signals: bool = False) -> None:
        """Run everything until cancelled, told to stop by SIGTERM/SIGINT (with `handle_signals`), or
        failed. Returns after a clean stop; raises the first failure (`LeaderElectionLost`,
        `CacheSyncTimeout`, a runnable's exception, `GracefulShutdownTimeout`); re-raises
        cancellation (which wins over a failure, which is then logged). With `handle_signals`, a
        second signal cuts the graceful stop short. Runs once.
        """
        if self._state is not _State.NEW:
            raise RuntimeError("a Manager runs only once")
        loop = asyncio.get_running_loop()
        if handle_signals:
            for signum in _SIGNALS:
                loop.add_signal_handler(signum, self._on_signal, signum)
        cancelled = False
        try:
            self._state = _State.RUNNING
            self._add_servers()
            _log.info("starting manager", identity=self.identity, runnables=[e.name for e in self._entries])
            async with asyncio.TaskGroup() as group:
                self._group = group
                startup = group.create_task(self._start_up(), name="manager startup")
                try:
                    await self._stop.wait()
                except asyncio.CancelledError:
                    cancelled = True
                self._state = _State.STOPPING
                # A fresh task: cancellation already delivered to this one must not confuse the
                # timeouts of the stop procedure. Cancelling run() again cuts it short.
                await group.create_task(self._shut_down(startup), name="manager shutdown")
        finally:
            if handle_signals:
                for signum in _SIGNALS:
                    loop.remove_signal_handler(signum)
            self._group = None
            self._state = _State.STOPPED
        if cancelled:
            # Cancellation wins over a failure during the stop: the caller's timeouts and task
            # groups rely on seeing it.
            if self._failure is not None:
                _log.error("manager stopped with an error", error=str(self._failure))
            raise asyncio.CancelledError
        if self._failure is not None:
            raise self._failure
        _log.info("manager stopped")

    def _on_signal(self, signum: int) -> None:
        if not self._stop.is_set():
            _log.info("signal received; stopping", signal=signal.Signals(signum).name)
            self._stop.set()
            return
        _log.warning("second signal received; cancelling every runnable", signal=signal.Signals(signum).name)
        for task in self._tasks():
            task.cancel()

    def _fail(self, error: BaseException) -> None:
        if self._failure is None:
            self._failure = error
        self._stop.set()

    def _tasks(self, *groups: _Group) -> list[asyncio.Task[None]]:
        chosen = set(groups) or set(_Group)
        tasks = [e.task for e in self._entries if e.group in chosen and e.task is not None]
        if not groups and self._elector_task is not None:
            tasks.append(self._elector_task)
        return [task for task in tasks if not task.done()]

    def _launch(self, entry: _Entry) -> None:
        assert self._group is not None
        entry.task = self._group.create_task(self._supervise(entry), name=f"runnable {entry.name}")

    async def _supervise(self, entry: _Entry) -> None:
        try:
            await entry.runnable.start()
        except asyncio.CancelledError:
            raise
        except Exception as e:
            _log.exception("runnable failed", runnable=entry.name)
            self._fail(e)
        else:
            if self._state is _State.RUNNING:
                _log.info("runnable returned", runnable=entry.name)

    async def _start_group(self, group: _Group) -> None:
        self._started.add(group)
        entries = [entry for entry in self._entries if entry.group is group]
        for entry in entries:
            self._launch(entry)
        await asyncio.gather(*(entry.ready() for entry in entries if entry.ready is not None))

    async def _start_up(self) -> None:
        try:
            await self._start_group(_Group.HTTP_SERVERS)
            await self._start_group(_Group.WEBHOOKS)
            try:
                async with asyncio.timeout(self.options.cache_sync_timeout):
                    await self._start_group(_Group.CACHES)
            except TimeoutError:
                raise CacheSyncTimeout(
                    f"caches did not sync within {self.options.cache_sync_timeout:g}s"
                ) from None
            self._caches_synced = True
            await self._start_group(_Group.OTHERS)
            if self._elector is None:
                await self._start_group(_Group.LEADER_ELECTION)
                self.elected.set()
            else:
                assert self._group is not None
                self._elector_task = self._group.create_task(
                    self._lead(self._elector), name="leader election"
                )
        except asyncio.CancelledError:
            raise
        except Exception as e:
            _log.error("manager failed to start", error=str(e))
            self._fail(e)

    async def _lead(self, elector: LeaderElector) -> None:
        try:
            await elector.acquire()
            await self._start_group(_Group.LEADER_ELECTION)
            self.elected.set()
            await elector.hold()
        except LeaderElectionLost as e:
            # Do not keep running without the lease: stop the leader runnables now, then the rest.
            for task in self._tasks(_Group.LEADER_ELECTION):
                task.cancel()
            self._fail(e)
        except Exception as e:
            _log.exception("leader election failed")
            self._fail(e)

    async def _stop_group(self, group: _Group, deadline: float | None) -> bool:
        tasks = self._tasks(group)
        for task in tasks:
            task.cancel()
        if not tasks:
            return True
        loop = asyncio.get_running_loop()
        timeout = None if deadline is None else max(0.0, deadline - loop.time())
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        if not pending:
            return True
        names = [e.name for e in self._entries if e.task in pending]
        _log.error("runnables did not stop within the grace period", group=group.name, runnables=names)
        for task in pending:
            task.cancel()  # a second cancellation: stop draining
        return False

    async def _shut_down(self, startup: asyncio.Task[None]) -> None:
        _log.info("stopping manager", reason=str(self._failure) if self._failure else "requested")
        startup.cancel()
        await asyncio.wait([startup])
        timeout = self.options.graceful_shutdown_timeout
        if timeout == 0 or isinstance(self._failure, LeaderElectionLost):
            for task in self._tasks():
                task.cancel()
            return
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        clean = await self._stop_group(_Group.LEADER_ELECTION, deadline)
        if self._elector_task is not None:
            self._elector_task.cancel()
            await asyncio.wait([self._elector_task])
        if self._elector is not None:
            release = (
                self.options.leader_election is not None and self.options.leader_election.release_on_cancel
            )
            if clean and release:
                await self._elector.release()
        for group in (_Group.OTHERS, _Group.CACHES, _Group.WEBHOOKS, _Group.HTTP_SERVERS):
            clean = await self._stop_group(group, deadline) and clean
        if not clean:
            self._fail(GracefulShutdownTimeout(f"runnables did not stop within {timeout:g}s"))
