"""Fault drill: the API server restarts again and again while a controller watches a churn.

A writer keeps changing ConfigMaps: each carries a counter that every write bumps, and now and then
one is deleted and created again. Meanwhile the API server of this module's own control plane is
stopped and started, each time while the controller's watch is live. The controller (built with
`olm_runtime`'s Builder) reconciles every ConfigMap from its cache and writes down the counter it
saw. Afterwards, checked against the API server: the server holds the last write the churn made to
every object (no update lost), the controller's cache holds exactly the server's objects (every
resourceVersion and every field), and the last reconcile of every object saw its final counter (no
reconcile missed).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean

import pytest

from e2e.faults import Figures, own_control_plane
from olm_runtime import cache, controller
from olm_runtime.client import Client, errors, kinds, load_config
from olm_runtime.manager import Manager, ManagerOptions
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually


@dataclass(frozen=True)
class _Size:
    restarts: int
    objects: int
    writes_between_restarts: int
    """The churn must make this many writes between two restarts, so each outage hits a churn."""


_DEFAULT = _Size(restarts=4, objects=400, writes_between_restarts=150)
_SOAK = _Size(restarts=10, objects=2000, writes_between_restarts=400)  # the numbers
_GRACE = 3.0
"""Every other restart is graceful: the API server closes its listener and drains requests (in well
under a second here), then hangs in its shutdown; after this long it is killed. The others are
crashes (SIGKILL): connections are cut, not closed."""
_BACKOFF = cache.ReflectorOptions(backoff_cap=4.0)
"""client-go's backoff forgets failures only after two healthy minutes, so with the default 30 s cap
a restart every few seconds would soon leave the reflector asleep for up to a minute per outage:
what the drill checks does not depend on the pacing, and a short cap keeps it within budget."""
_WRITERS = 16
_RECREATE_EVERY = 25
"""Every 25th step of the churn deletes the object, or creates it again if it is gone."""
_TRANSIENT = (
    errors.TransportError,
    TimeoutError,
    errors.ServiceUnavailable,
    errors.TooManyRequests,
    errors.ServerTimeout,
)
"""What a write may meet while the API server stops or starts; the write is then retried."""


@pytest.fixture(scope="module")
def restarting_plane(
    control_plane_binaries: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    yield from own_control_plane(control_plane_binaries, tmp_path_factory.mktemp("restarts"))


async def _connect(plane: ControlPlane, field_manager: str) -> Client:
    return await Client.connect(await load_config(kubeconfig=plane.kubeconfig), field_manager=field_manager)


def _counter(obj: cache.Object | None) -> int | None:
    if obj is None:
        return None
    return int(obj["data"]["counter"])


class _Churn:
    """Writes to the server from `_WRITERS` tasks, each owning a share of the names (so writes to
    one object never race), and remembers what it last wrote to each: its counter, or None once
    deleted. Each write is retried until it lands; the retries are idempotent (a counter is set,
    not incremented) so a write whose answer was lost to a restart is safe to repeat."""

    def __init__(self, client: Client, namespace: str, names: list[str]) -> None:
        self._client, self._namespace, self._names = client, namespace, names
        self.expected: dict[str, int | None] = dict.fromkeys(names)
        self._last: dict[str, int] = {}  # the counter last written, kept across a deletion
        self.creates = self.updates = self.deletes = self.interrupted = 0

    @property
    def writes(self) -> int:
        return self.creates + self.updates + self.deletes

    async def run(self, stop: asyncio.Event) -> None:
        async with asyncio.TaskGroup() as tasks:
            for share in range(_WRITERS):
                tasks.create_task(self._writer(self._names[share::_WRITERS], stop))

    async def _writer(self, names: list[str], stop: asyncio.Event) -> None:
        for step in itertools.count():
            for index, name in enumerate(names):
                if stop.is_set():
                    return
                await self._step(name, recreate=(step + index) % _RECREATE_EVERY == 0)

    async def _step(self, name: str, *, recreate: bool) -> None:
        current = self.expected[name]
        if current is None:
            counter = self._last.get(name, -1) + 1
            body = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": self._namespace},
                "data": {"counter": str(counter)},
            }
            await self._land(lambda: self._client.create(body), tolerate_on_retry=errors.AlreadyExists)
            self.expected[name] = self._last[name] = counter
            self.creates += 1
        elif recreate:
            await self._land(
                lambda: self._client.delete(kinds.CONFIG_MAP, name, namespace=self._namespace),
                tolerate_on_retry=errors.NotFound,
            )
            self.expected[name] = None
            self.deletes += 1
        else:
            counter = current + 1
            patch = {"data": {"counter": str(counter)}}
            await self._land(
                lambda: self._client.patch(kinds.CONFIG_MAP, name, patch, namespace=self._namespace),
                tolerate_on_retry=None,
            )
            self.expected[name] = self._last[name] = counter
            self.updates += 1

    async def _land(
        self, write: Callable[[], Awaitable[object]], *, tolerate_on_retry: type[errors.APIError] | None
    ) -> None:
        """Send `write` until the server answers; on a retry, `tolerate_on_retry` means an earlier
        attempt landed although its answer was lost (e.g. AlreadyExists after a create)."""
        attempts = 0

        async def landed() -> bool:
            nonlocal attempts
            attempts += 1
            if attempts == 2:
                self.interrupted += 1
            try:
                await write()
            except _TRANSIENT:
                return False
            except errors.APIError as error:
                if attempts == 1 or tolerate_on_retry is None or not isinstance(error, tolerate_on_retry):
                    raise
            return True

        await eventually(landed, what="a churn write to land", timeout=180, interval=0.1)


class _Recorder:
    """The drill's reconciler: reads the object from the cache and writes down its counter."""

    def __init__(self, reader: cache.CacheReader) -> None:
        self._reader = reader
        self.seen: dict[str, int | None] = {}
        self.reconciles = 0

    async def reconcile(self, request: controller.Request) -> controller.Result:
        self.reconciles += 1
        try:
            obj = await self._reader.get(kinds.CONFIG_MAP, request.name, namespace=request.namespace)
        except errors.NotFound:
            self.seen[request.name] = None
            return controller.Result()
        if "counter" in (obj.get("data") or {}):  # not the namespace's kube-root-ca.crt
            self.seen[request.name] = _counter(obj)
        return controller.Result()


@contextlib.asynccontextmanager
async def _running(manager: Manager) -> AsyncIterator[None]:
    task = asyncio.create_task(manager.run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_controller_survives_api_server_restarts_under_churn_without_losing_anything(
    restarting_plane: ControlPlane, soak: bool, figures: Figures
) -> None:
    size = _SOAK if soak else _DEFAULT
    started = time.monotonic()
    namespace = f"churn-{uuid.uuid4().hex[:8]}"
    names = [f"obj-{i:04}" for i in range(size.objects)]
    async with (
        await _connect(restarting_plane, "fault-drill-churn") as writer,
        await _connect(restarting_plane, "fault-drill-controller") as controller_client,
    ):
        await writer.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        options = ManagerOptions(
            metrics_bind_address="0",
            cache=cache.CacheOptions(namespaces=(namespace,), gc_freeze=False, reflector=_BACKOFF),
        )
        manager = Manager(controller_client, options=options)
        recorder = _Recorder(manager.reader)
        await (
            controller.Builder(manager)
            .for_(kinds.CONFIG_MAP)
            .named("fault-drill")
            .with_options(controller.Options(max_concurrent_reconciles=4))
            .complete(recorder)
        )
        churn = _Churn(writer, namespace, names)
        stop = asyncio.Event()
        async with _running(manager):
            await manager.cache.wait_for_cache_sync(timeout=60)
            informer = await manager.cache.get_informer(kinds.CONFIG_MAP)
            churning = asyncio.create_task(churn.run(stop))
            try:
                outages = await _restart_repeatedly(restarting_plane, informer, churn, size)
            finally:
                stop.set()
                await churning
            after_restarts = time.monotonic()
            listed = await writer.list(kinds.CONFIG_MAP, namespace=namespace)
            server = {o["metadata"]["name"]: o for o in listed.items}
            # No update lost: the server holds the last write the churn made to every object.
            lost = [n for n in names if _counter(server.get(n)) != churn.expected[n]]

            def cached() -> dict[str, cache.Object]:
                return {o["metadata"]["name"]: o for o in informer.list(namespace)}

            async def caught_up() -> bool:
                versions = {n: o["metadata"]["resourceVersion"] for n, o in cached().items()}
                return versions == {n: o["metadata"]["resourceVersion"] for n, o in server.items()} and all(
                    recorder.seen.get(name) == churn.expected[name] for name in names
                )

            if not lost:
                await eventually(caught_up, what="the cache and the reconciler to catch up", timeout=180)
            caught_up_after = time.monotonic() - after_restarts
            stats = informer.statistics().reflectors[0]
        # The cache's objects are the server's, field by field (the cache drops managedFields).
        mirror = cached()
        mismatches = [
            n
            for n in server.keys() | mirror.keys()
            if n not in server or cache.strip_managed_fields(dict(server[n])) != mirror.get(n)
        ]
        missed = [n for n in names if recorder.seen.get(n) != churn.expected[n]]
    figures(
        {
            "restarts survived (graceful / crash)": f"{len(outages[::2])} / {len(outages[1::2])}",
            "objects churned": size.objects,
            "writes": churn.writes,
            "creates / updates / deletes": f"{churn.creates} / {churn.updates} / {churn.deletes}",
            "writes interrupted by an outage (retried)": churn.interrupted,
            "outage (stop + start) mean / max": f"{fmean(outages):.1f} / {max(outages):.1f} s",
            "reconciles": recorder.reconciles,
            "objects compared (cache vs server)": len(server),
            "writes lost": len(lost),
            "mismatches": len(mismatches),
            "reconciles missed": len(missed),
            "watches opened": stats.watches,
            "lists / streaming lists": f"{stats.lists} / {stats.streaming_lists}",
            "410 Gone / errors backed off": f"{stats.expired} / {stats.errors}",
            "caught up after the last restart": f"{caught_up_after:.1f} s",
            "duration": f"{time.monotonic() - started:.1f} s",
        }
    )
    assert len(outages) == size.restarts
    assert lost == []
    assert mismatches == []
    assert missed == []


async def _restart_repeatedly(
    plane: ControlPlane, informer: cache.Informer, churn: _Churn, size: _Size
) -> list[float]:
    """Restart the API server `size.restarts` times, gracefully and by crashing in turn, each time
    only once the controller's watch is open again (so the outage breaks a live watch) and the
    churn has moved on; return how long each outage lasted."""
    outages: list[float] = []
    watches = writes = 0
    for restart in range(size.restarts):

        async def ready_for_outage(watches: int = watches, writes: int = writes) -> bool:
            stats = informer.statistics().reflectors[0]
            live = stats.watch_age is not None and stats.watches > watches
            return live and churn.writes >= writes + size.writes_between_restarts

        await eventually(ready_for_outage, what="a live watch and churn before the next restart", timeout=180)
        # A watch opened after this count was opened after the outage.
        watches, writes = informer.statistics().reflectors[0].watches, churn.writes
        stopped = time.monotonic()
        grace = _GRACE if restart % 2 == 0 else 0.0
        await asyncio.to_thread(plane.stop_component, "kube-apiserver", grace=grace)
        await asyncio.to_thread(plane.start_component, "kube-apiserver")
        outages.append(time.monotonic() - stopped)
    return outages
