"""operator-controller's metrics: install timing per spec generation, resolution timing, preflight
outcomes and the catalog client's counters (read from a real client talking to the real server)."""

from __future__ import annotations

import datetime
import io
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry, Histogram

from olm import fbc
from olm.catalogd.storage import Storage
from olm.operator_controller import metrics
from olm.pipeline import catalogs
from olm_runtime.controller.steps import Ran
from olm_runtime.metrics import REGISTRY
from unit.pipeline.catalogs.serving import Running, serving

CREATED = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)
DIGEST = "sha256:" + "1" * 64


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _histogram() -> tuple[Histogram, CollectorRegistry]:
    registry = CollectorRegistry()
    return Histogram("install_seconds", "Test.", ("change",), registry=registry), registry


def _extension(generation: int) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "argocd",
            "generation": generation,
            "creationTimestamp": CREATED.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    }


def _conditions(generation: int, *, installed: bool, progressing: str) -> list[dict[str, Any]]:
    return [
        {"type": "Installed", "status": "True" if installed else "False", "observedGeneration": generation},
        {"type": "Progressing", "status": "True", "reason": progressing, "observedGeneration": generation},
    ]


ROLLING = _conditions(1, installed=False, progressing="RollingOut")
DONE = _conditions(1, installed=True, progressing="Succeeded")


def test_an_install_is_timed_from_creation_once() -> None:
    histogram, registry = _histogram()
    clock = Clock(CREATED.timestamp() + 5)
    timer = metrics.InstallClock(histogram, now=clock)
    assert timer.observe(_extension(1), [], ROLLING) is None
    clock.now += 37
    assert timer.observe(_extension(1), ROLLING, DONE) == 42.0
    clock.now += 10
    assert timer.observe(_extension(1), DONE, DONE) is None
    assert registry.get_sample_value("install_seconds_count", {"change": "created"}) == 1
    assert registry.get_sample_value("install_seconds_sum", {"change": "created"}) == 42.0


def test_a_spec_change_is_timed_from_the_first_reconcile_that_sees_it() -> None:
    histogram, registry = _histogram()
    clock = Clock(CREATED.timestamp() + 100)
    timer = metrics.InstallClock(histogram, now=clock)
    assert timer.observe(_extension(1), ROLLING, DONE) == 100.0
    clock.now += 600  # the spec changes much later
    upgrading = _conditions(2, installed=True, progressing="RollingOut")
    assert timer.observe(_extension(2), DONE, upgrading) is None
    clock.now += 12
    assert (
        timer.observe(_extension(2), upgrading, _conditions(2, installed=True, progressing="Succeeded")) == 12
    )
    assert registry.get_sample_value("install_seconds_count", {"change": "updated"}) == 1


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(DONE, DONE, id="already-rolled-out-when-first-seen"),
        pytest.param(_conditions(1, installed=True, progressing="Retrying"), ROLLING, id="not-installed-yet"),
        pytest.param(
            [],
            _conditions(0, installed=True, progressing="Succeeded"),
            id="rolled-out-for-an-older-generation",
        ),
    ],
)
def test_nothing_is_observed_without_a_rollout_of_the_current_generation(
    before: list[dict[str, Any]], after: list[dict[str, Any]]
) -> None:
    histogram, registry = _histogram()
    timer = metrics.InstallClock(histogram, now=Clock(CREATED.timestamp() + 5))
    assert timer.observe(_extension(1), before, after) is None
    assert registry.get_sample_value("install_seconds_count", {"change": "created"}) is None


def test_after_a_restart_a_pending_update_is_timed_from_when_it_was_first_seen() -> None:
    histogram, _ = _histogram()
    clock = Clock(CREATED.timestamp() + 3600)
    timer = metrics.InstallClock(histogram, now=clock)
    upgrading = _conditions(3, installed=True, progressing="RollingOut")
    assert timer.observe(_extension(3), upgrading, upgrading) is None
    clock.now += 8
    assert (
        timer.observe(_extension(3), upgrading, _conditions(3, installed=True, progressing="Succeeded")) == 8
    )


def test_a_forgotten_extension_created_again_is_timed_again() -> None:
    histogram, registry = _histogram()
    clock = Clock(CREATED.timestamp() + 5)
    timer = metrics.InstallClock(histogram, now=clock)
    assert timer.observe(_extension(1), ROLLING, DONE) == 5
    timer.forget("argocd")
    assert timer.observe(_extension(1), ROLLING, DONE) == 5
    assert registry.get_sample_value("install_seconds_count", {"change": "created"}) == 2


@pytest.mark.parametrize(
    ("ran", "expected"),
    [
        pytest.param(Ran(seconds=(("read_revisions", 0.1), ("resolve", 0.25)), stopped_at=None), "success"),
        pytest.param(Ran(seconds=(("resolve", 0.5),), stopped_at="resolve"), "failure"),
        pytest.param(Ran(seconds=(("resolve", 0.5), ("unpack", 1.0)), stopped_at="unpack"), "success"),
    ],
)
def test_resolution_is_timed_with_its_result(ran: Ran, expected: str) -> None:
    registry = CollectorRegistry()
    histogram = Histogram("resolution_seconds", "Test.", ("result",), registry=registry)
    metrics.observe_resolution(ran, histogram)
    resolved = dict(ran.seconds)["resolve"]
    assert registry.get_sample_value("resolution_seconds_sum", {"result": expected}) == resolved


def test_a_reconcile_stopped_before_resolving_observes_nothing() -> None:
    registry = CollectorRegistry()
    histogram = Histogram("resolution_seconds", "Test.", ("result",), registry=registry)
    metrics.observe_resolution(Ran(seconds=(("check_name", 0.001),), stopped_at="check_name"), histogram)
    assert [s for family in registry.collect() for s in family.samples] == []


def test_every_preflight_series_exists_from_the_start() -> None:
    for check in metrics.PreflightCheck:
        for result in metrics.PreflightResult:
            labels = {"check": check.value, "result": result.value}
            assert REGISTRY.get_sample_value("operator_controller_preflight_checks_total", labels) is not None


# --- the catalog client's counters, through a real client and the real content server -----------


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    storage = Storage(tmp_path / "store")
    metas = [
        {"schema": "olm.package", "name": "demo", "defaultChannel": "stable"},
        {"schema": "olm.channel", "package": "demo", "name": "stable", "entries": [{"name": "demo.v1.0.0"}]},
        {
            "schema": "olm.bundle",
            "package": "demo",
            "name": "demo.v1.0.0",
            "image": "r.example/demo:1",
            "properties": [{"type": "olm.package", "value": {"packageName": "demo", "version": "1.0.0"}}],
        },
    ]
    jsonl = "\n".join(json.dumps(obj) for obj in metas).encode()
    await storage.store("demo", DIGEST, fbc.checked(fbc.iter_stream(io.BytesIO(jsonl), "catalog.json")))
    async with serving(storage, tmp_path) as server:
        yield server


async def test_catalog_reads_are_counted_and_collected(running: Running) -> None:
    client = catalogs.CatalogClient(catalogs.ClientOptions(ca_file=running.ca_file))
    ref = catalogs.CatalogRef(name="demo", digest=DIGEST, base_url=running.base("demo"))
    try:
        await client.get_package(ref, "demo")
        await client.get_package(ref, "demo")
    finally:
        await client.close()
    expected = 0
    context = ssl.create_default_context(cafile=str(running.ca_file))
    async with aiohttp.ClientSession() as session:
        for query in ("package=demo", "schema=olm.package&name=demo"):
            url = f"{running.base('demo')}/api/v1/metas?{query}"
            async with session.get(url, ssl=context) as response:
                expected += len(await response.read())
    registry = CollectorRegistry()
    registry.register(metrics.CatalogClientCollector(client.statistics))

    def value(name: str) -> float | None:
        return registry.get_sample_value(f"operator_controller_catalog_{name}")

    assert value("cache_misses_total") == 1
    assert value("cache_hits_total") == 1
    assert value("requests_total") == 2
    assert value("fetch_bytes_total") == expected > 0
    assert value("cache_bytes") == expected
    assert value("not_modified_total") == 0


def _held_series(name: str) -> list[tuple[str, str]]:
    return [
        (sample.labels["version"], sample.labels["gate"])
        for family in REGISTRY.collect()
        if family.name == "olm_clusterextension_update_held"
        for sample in family.samples
        if sample.labels.get("name") == name and sample.value == 1
    ]


def test_a_held_step_has_one_series_replaced_as_it_changes_and_dropped_with_the_extension() -> None:
    name = "held-metric-test"
    metrics.set_update_held(name, "1.0.1", "Readiness")
    assert _held_series(name) == [("1.0.1", "Readiness")]
    metrics.set_update_held(name, "1.1.0", "OutsidePolicy")
    assert _held_series(name) == [("1.1.0", "OutsidePolicy")]
    metrics.set_update_held(name, None, None)
    assert _held_series(name) == []
    metrics.set_update_held(name, "1.1.0", "PermissionGrowth")
    metrics.forget(name)
    assert _held_series(name) == []
