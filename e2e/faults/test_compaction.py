"""Fault drill: etcd compacts its history under a watch; the informer relists once, quietly.

The API server of this module's own control plane keeps no watch cache for ConfigMaps, so watches
and lists of them go to etcd, as for any resource whose cache is off, and it never compacts etcd
itself: only the drill does, through etcd's HTTP gateway. Each round changes a few watched objects
(the watch delivers them), moves etcd's revision on with writes elsewhere, and compacts etcd past
the revision the informer last saw. The informer's next watch (the server ends each after 2 s) is
answered 410 Gone.

The recovery must cost one relist per compaction, not a resync storm, and the relist, which finds
every object unchanged, must tell the event handlers nothing. The relist first asks for the state
at the informer's last resourceVersion, as client-go does; the collection is larger than a page, so
that request is a paged one, which the server serves only at exactly that (compacted) revision: it
too is answered 410, and the reflector lists the newest state. So each compaction costs two 410s,
one refused LIST and one list of the whole collection in pages, as the reflector's counters and the
API server's own request counter both show.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from e2e.faults import Figures, own_control_plane
from e2e.runtime.cache.conftest import cache_state, configmap, running, server_state
from e2e.runtime.client.conftest import namespace_settled
from olm_runtime import cache
from olm_runtime.client import Client, kinds, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually


@dataclass(frozen=True)
class _Size:
    objects: int
    compactions: int
    changes_per_round: int


_DEFAULT = _Size(objects=500, compactions=3, changes_per_round=5)
_SOAK = _Size(objects=2000, compactions=10, changes_per_round=20)
_REFLECTOR = cache.ReflectorOptions(
    # Paged lists, so every relist is a LIST the API server counts (a streaming list is a watch).
    list_mode=cache.ListMode.PAGED,
    # The server ends every watch after 2 s, so the informer reconnects (and meets the compaction)
    # soon, as it would after its usual 5-10 minutes.
    min_watch_timeout=2,
    max_watch_timeout=2,
    # client-go's backoff, which also follows every relist, grows until two quiet minutes pass;
    # a short cap keeps rounds a few seconds apart without changing what is counted.
    backoff_cap=2.0,
)


@pytest.fixture(scope="module")
def compacting_plane(
    control_plane_binaries: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ControlPlane]:
    yield from own_control_plane(
        control_plane_binaries,
        tmp_path_factory.mktemp("compaction"),
        "--watch-cache-sizes=configmaps#0",
        "--etcd-compaction-interval=0",
    )


@pytest.fixture
async def admin(compacting_plane: ControlPlane) -> AsyncIterator[Client]:
    config = await load_config(kubeconfig=compacting_plane.kubeconfig)
    async with await Client.connect(config, field_manager="fault-drill-compaction") as client:
        yield client


class _Tally:
    """An event handler that counts what it is told."""

    def __init__(self) -> None:
        self.adds = self.updates = self.unchanged_updates = self.deletes = 0

    def on_add(self, obj: cache.Object, is_initial_list: bool) -> None:
        if not is_initial_list:
            self.adds += 1

    def on_update(self, old: cache.Object, new: cache.Object) -> None:
        self.updates += 1
        if old["metadata"]["resourceVersion"] == new["metadata"]["resourceVersion"]:
            self.unchanged_updates += 1

    def on_delete(self, obj: cache.Object | cache.DeletedFinalStateUnknown) -> None:
        self.deletes += 1

    def snapshot(self) -> tuple[int, int, int, int]:
        return self.adds, self.updates, self.unchanged_updates, self.deletes


async def _compact(plane: ControlPlane, revision: int) -> None:
    """Compact etcd's history up to `revision` through its v3 HTTP gateway (etcdctl is not built)."""
    url = f"http://127.0.0.1:{plane.ports['etcd']}/v3/kv/compaction"
    async with (
        aiohttp.ClientSession() as session,
        session.post(url, json={"revision": revision, "physical": True}) as response,
    ):
        response.raise_for_status()


async def _server_lists(admin: Client) -> int:
    """How many namespaced LISTs of ConfigMaps the API server has answered, by its own metrics."""
    text = (await admin.transport.request("GET", "/metrics", headers={"Accept": "text/plain"})).decode()
    return int(
        sum(
            sample.value
            for family in text_string_to_metric_families(text)
            if family.name == "apiserver_request"
            for sample in family.samples
            if sample.name == "apiserver_request_total"
            and sample.labels.get("verb") == "LIST"
            and sample.labels.get("resource") == "configmaps"
            and sample.labels.get("scope") == "namespace"
        )
    )


def _each(counts: list[int]) -> str:
    return " ".join(map(str, counts))


def _metric(registry: CollectorRegistry, name: str) -> float:
    return sum(s.value for family in registry.collect() for s in family.samples if s.name == name)


async def _namespace(admin: Client) -> str:
    """A new namespace, once the controller-manager has added its kube-root-ca.crt ConfigMap (which
    would otherwise arrive at a moment of its own and count as an event)."""
    namespace = f"compaction-{uuid.uuid4().hex[:8]}"
    await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    await namespace_settled(admin, namespace)
    return namespace


async def test_a_compaction_costs_one_relist_per_410_and_no_spurious_events(
    compacting_plane: ControlPlane, admin: Client, soak: bool, figures: Figures
) -> None:
    size = _SOAK if soak else _DEFAULT
    started = time.monotonic()
    watched, busy = await _namespace(admin), await _namespace(admin)
    names = [f"cm-{i:04}" for i in range(size.objects)]
    for name in names:
        await admin.create(configmap(name, watched, value="0"))
    registry = CollectorRegistry()
    options = cache.CacheOptions(namespaces=(watched,), gc_freeze=False, reflector=_REFLECTOR)
    shared = cache.Cache(admin.transport, admin.mapper, options, metrics=cache.CacheMetrics(registry))
    informer = await shared.get_informer(kinds.CONFIG_MAP)
    tally = _Tally()
    informer.add_event_handler(tally)
    server_lists: list[int] = []
    pages: list[int] = []
    expired: list[int] = []
    relists: list[int] = []
    quiet_relists = 0
    async with running(shared):
        await shared.wait_for_cache_sync(timeout=60)
        first = informer.statistics().reflectors[0]
        for round_ in range(size.compactions):
            # Changes the live watch delivers as events.
            changed = names[round_ * size.changes_per_round :][: size.changes_per_round]
            versions = {}
            for name in changed:
                patched = await admin.patch(
                    kinds.CONFIG_MAP, name, {"data": {"value": str(round_ + 1)}}, namespace=watched
                )
                versions[name] = patched["metadata"]["resourceVersion"]

            async def delivered(versions: dict[str, str] = versions) -> bool:
                return all(
                    (informer.get(n, watched) or {}).get("metadata", {}).get("resourceVersion") == rv
                    for n, rv in versions.items()
                )

            await eventually(delivered, what="the round's changes to reach the cache")
            before, counted = informer.statistics().reflectors[0], await _server_lists(admin)
            events = tally.snapshot()
            # Move etcd's revision on by two writes the watch does not see, then compact up to the
            # second: the informer's next watch starts below the compacted revision.
            await admin.create(configmap(f"noise-{round_}-a", busy, value=""))
            noise = await admin.create(configmap(f"noise-{round_}-b", busy, value=""))
            await _compact(compacting_plane, int(noise["metadata"]["resourceVersion"]))

            async def relisted(expired: int = before.expired, lists: int = before.lists) -> bool:
                stats = informer.statistics().reflectors[0]
                return stats.expired > expired and stats.lists > lists and stats.watch_age is not None

            await eventually(relisted, what="a 410 Gone and the relist after it", timeout=60)
            after = informer.statistics().reflectors[0]
            server_lists.append(await _server_lists(admin) - counted)
            pages.append(after.pages - before.pages)
            expired.append(after.expired - before.expired)
            relists.append(after.lists - before.lists)
            quiet_relists += tally.snapshot() == events
        stats = informer.statistics().reflectors[0]
        cached = cache_state(informer, watched)
        server = await server_state(admin, watched)
    figures(
        {
            "objects watched": len(server),
            "compactions": size.compactions,
            "410 Gone in all (reflector / informer_expired_total)": (
                f"{stats.expired - first.expired} / {_metric(registry, 'informer_expired_total'):.0f}"
            ),
            "410 Gone per compaction": _each(expired),
            "completed relists per compaction": _each(relists),
            "pages per relist (reflector)": _each(pages),
            "LIST requests per compaction (API server)": _each(server_lists),
            "relists that told the handlers nothing": f"{quiet_relists} of {size.compactions}",
            "handler updates (all from the rounds' changes)": tally.updates,
            "handler updates with an unchanged resourceVersion": tally.unchanged_updates,
            "handler adds / deletes after sync": f"{tally.adds} / {tally.deletes}",
            "errors backed off": stats.errors - first.errors,
            "cache equals server": cached == server,
            "duration": f"{time.monotonic() - started:.1f} s",
        }
    )
    page_count = -(-len(server) // _REFLECTOR.page_size)
    assert page_count > 1  # the drill is about a collection that takes more than one page
    assert relists == [1] * size.compactions
    assert expired == [2] * size.compactions  # the watch's, then the paged list's at the old revision
    assert stats.expired - first.expired == _metric(registry, "informer_expired_total")
    assert pages == [page_count] * size.compactions
    assert server_lists == [1 + page_count] * size.compactions  # the refused LIST, then the pages
    assert quiet_relists == size.compactions
    assert (tally.updates, tally.unchanged_updates) == (size.compactions * size.changes_per_round, 0)
    assert (tally.adds, tally.deletes) == (0, 0)
    assert cached == server
