"""operator-controller's own metrics, on the runtime's registry (served by the manager's `/metrics`).

Process metrics are prefixed `operator_controller_`; the per-object gauges are prefixed with the
kind they describe (`olm_clusterextension_`), as kube-state-metrics names its `kube_<kind>_`
families. Every family is documented in `docs/observability/metrics.md`, with how to alert on it.

- `operator_controller_resolution_duration_seconds{result}`: the `resolve` step of each
  ClusterExtension reconcile (reading the selected catalogs' package and choosing a bundle).
- `operator_controller_install_duration_seconds{change}`: from a spec generation's start (the
  extension's creation, or the first reconcile of a changed spec) until it is rolled out
  (`InstallClock`).
- `operator_controller_preflight_checks_total{check,result}`: each preflight's outcome.
- `operator_controller_catalog_*`: catalogd content reads, from `CatalogClient.statistics()` at
  scrape time (`CatalogClientCollector`).
- `olm_clusterextension_revisions{name,state}` and `olm_clusterextension_status_condition{name,type,
  status,reason}`: per extension; reported by the replica that reconciles (the leader).
- `olm_clusterextension_update_available{name,package,installed,available}`: 1 while an update is
  available to an installed extension (`status.update.available`), whether or not it applies.
- `olm_clusterextension_update_held{name,version,gate}`: 1 while `spec.upgrade` (or the cluster, or
  the operator) holds a step (`status.update.held`); `gate` is its `heldBy`.
"""

from __future__ import annotations

import datetime
import enum
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from olm.api import conditions as api
from olm.api.revisions import RevisionStates
from olm.pipeline.catalogs import Statistics
from olm_runtime import conditions
from olm_runtime.controller.steps import Ran
from olm_runtime.metrics import REGISTRY, ConditionGauge

__all__ = [
    "CONDITIONS",
    "INSTALL_DURATION",
    "PREFLIGHT_CHECKS",
    "RESOLUTION_DURATION",
    "REVISIONS",
    "UPDATE_AVAILABLE",
    "UPDATE_HELD",
    "CatalogClientCollector",
    "Change",
    "InstallClock",
    "PreflightCheck",
    "PreflightResult",
    "ResolutionResult",
    "forget",
    "observe_resolution",
    "preflight_ran",
    "register_catalog_client",
    "rolled_out",
    "set_revisions",
    "set_update_available",
    "set_update_held",
]


class ResolutionResult(enum.StrEnum):
    """Values of the `result` label of the resolution histogram."""

    SUCCESS = "success"
    """A bundle was chosen (or, with no catalog readable, the installed one is kept)."""
    FAILURE = "failure"
    """No bundle satisfies the spec in the catalogs that could be read."""


class Change(enum.StrEnum):
    """Values of the `change` label of the install histogram: what started the generation."""

    CREATED = "created"
    """The extension was created (generation 1): timed from `metadata.creationTimestamp`."""
    UPDATED = "updated"
    """The spec changed: timed from the first reconcile that saw the new generation."""


class PreflightCheck(enum.StrEnum):
    """Values of the `check` label of the preflight counter."""

    CRD_UPGRADE_SAFETY = "crd_upgrade_safety"
    PERMISSIONS = "permissions"


class PreflightResult(enum.StrEnum):
    """Values of the `result` label of the preflight counter."""

    PASSED = "passed"
    FAILED = "failed"
    """The check found a problem; the extension reports it in `Progressing`."""
    ERROR = "error"
    """The check could not run (the API server did not answer it)."""
    SKIPPED = "skipped"
    """Turned off by the spec (`crdUpgradeSafety.enforcement: None`)."""


RESOLUTION_DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Five milliseconds (answered from the client's cache) to a minute (a 100 MB catalog read whole)."""

INSTALL_DURATION_BUCKETS = (
    *(1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0),
    *(120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0),
)
"""A second to an hour: installs wait for Deployments to become Available."""

RESOLUTION_DURATION = Histogram(
    "operator_controller_resolution_duration_seconds",
    "Time a ClusterExtension reconcile took to read the selected catalogs and choose a bundle.",
    ("result",),
    buckets=RESOLUTION_DURATION_BUCKETS,
    registry=REGISTRY,
)
"""`operator_controller_resolution_duration_seconds{result}`."""

INSTALL_DURATION = Histogram(
    "operator_controller_install_duration_seconds",
    "Time from a ClusterExtension's creation or spec change until its bundle was installed and "
    "rolled out (Installed=True, Progressing=True/Succeeded for that generation).",
    ("change",),
    buckets=INSTALL_DURATION_BUCKETS,
    registry=REGISTRY,
)
"""`operator_controller_install_duration_seconds{change}`."""

PREFLIGHT_CHECKS = Counter(
    "operator_controller_preflight_checks_total",
    "Preflight checks run before a new revision is created, by check and result.",
    ("check", "result"),
    registry=REGISTRY,
)
"""`operator_controller_preflight_checks_total{check,result}`."""

REVISIONS = Gauge(
    "olm_clusterextension_revisions",
    "ClusterObjectSet revisions of a ClusterExtension, by lifecycle state (active or archived).",
    ("name", "state"),
    registry=REGISTRY,
)
"""`olm_clusterextension_revisions{name,state}`: by extension name, which the alert on piling-up
active revisions must name; one extension has two series."""

CONDITION_TYPES = (
    api.TYPE_INSTALLED,
    api.TYPE_PROGRESSING,
    api.TYPE_AVAILABLE,
    api.TYPE_DEPRECATED,
    api.TYPE_UPDATE_HELD,
)
"""The conditions worth alerting on; the finer deprecation conditions are summed up by Deprecated."""

CONDITIONS = ConditionGauge(
    "olm_clusterextension_status_condition",
    "The current status and reason of a ClusterExtension's conditions (1 for the reported pair).",
    types=CONDITION_TYPES,
    registry=REGISTRY,
)
"""`olm_clusterextension_status_condition{name,type,status,reason}`."""

UPDATE_AVAILABLE = Gauge(
    "olm_clusterextension_update_available",
    "1 while a newer bundle can be reached from a ClusterExtension's installed one.",
    ("name", "package", "installed", "available"),
    registry=REGISTRY,
)
"""`olm_clusterextension_update_available{name,package,installed,available}`: one series per
extension with an update, replaced when either version changes."""
_update_series: dict[str, tuple[str, ...]] = {}
UPDATE_HELD = Gauge(
    "olm_clusterextension_update_held",
    "1 while a step of a ClusterExtension's update is held; gate is what holds it.",
    ("name", "version", "gate"),
    registry=REGISTRY,
)
"""`olm_clusterextension_update_held{name,version,gate}`: one series per extension with a held
step, replaced when the step or its gate changes."""
_held_series: dict[str, tuple[str, ...]] = {}

# Every bounded series exists from the start, so rates and alerts work before the first event.
for _result in ResolutionResult:
    RESOLUTION_DURATION.labels(_result.value)
for _change in Change:
    INSTALL_DURATION.labels(_change.value)
for _check in PreflightCheck:
    for _outcome in PreflightResult:
        PREFLIGHT_CHECKS.labels(_check.value, _outcome.value)


def preflight_ran(check: PreflightCheck, result: PreflightResult) -> None:
    """Count one preflight outcome."""
    PREFLIGHT_CHECKS.labels(check.value, result.value).inc()


RESOLVE_STEP = "resolve"
"""The ClusterExtension reconcile's step that gathers catalogs and resolves."""


def observe_resolution(ran: Ran, histogram: Histogram = RESOLUTION_DURATION) -> None:
    """Time the resolve step of a reconcile, if it ran; it stops the reconcile only when it fails."""
    for step, seconds in ran.seconds:
        if step == RESOLVE_STEP:
            failed = ran.stopped_at == RESOLVE_STEP
            result = ResolutionResult.FAILURE if failed else ResolutionResult.SUCCESS
            histogram.labels(result.value).observe(seconds)


def set_revisions(name: str, states: RevisionStates) -> None:
    """Report how many revisions `name` has in each lifecycle state."""
    active = len(states.active)
    REVISIONS.labels(name, "active").set(active)
    REVISIONS.labels(name, "archived").set(len(states.all) - active)


def _replace_series(
    gauge: Gauge, series: dict[str, tuple[str, ...]], name: str, labels: tuple[str, ...] | None
) -> None:
    """Make `labels` extension `name`'s one series of `gauge` (None: no series)."""
    old = series.get(name)
    if old == labels:
        return
    if old is not None:
        gauge.remove(*old)
        del series[name]
    if labels is not None:
        gauge.labels(*labels).set(1)
        series[name] = labels


def set_update_available(name: str, package: str, installed: str | None, available: str | None) -> None:
    """Report the update available to extension `name` (None: there is none, or nothing installed)."""
    labels = (name, package, installed, available) if installed and available else None
    _replace_series(UPDATE_AVAILABLE, _update_series, name, labels)


def set_update_held(name: str, version: str | None, gate: str | None) -> None:
    """Report the step held for extension `name` and what holds it (None: nothing is held)."""
    _replace_series(UPDATE_HELD, _held_series, name, (name, version, gate) if version and gate else None)


def forget(name: str) -> None:
    """Drop every per-object series of extension `name` (it was deleted)."""
    for state in ("active", "archived"):
        REVISIONS.remove(name, state)  # a no-op for a series never reported
    CONDITIONS.remove(name)
    set_update_available(name, "", None, None)
    set_update_held(name, None, None)


def rolled_out(reported: Sequence[Mapping[str, Any]], generation: int) -> bool:
    """Whether conditions say `generation` is installed and rolled out."""
    progressing = conditions.find(reported, api.TYPE_PROGRESSING) or {}
    return (
        conditions.is_true(reported, api.TYPE_INSTALLED)
        and progressing.get("status") == "True"
        and progressing.get("reason") == api.REASON_SUCCEEDED
        and progressing.get("observedGeneration") == generation
    )


@dataclass
class _Generation:
    number: int
    started: float
    """Wall-clock seconds."""
    change: Change
    observed: bool = False


class InstallClock:
    """Times each spec generation of each extension from its start until it is rolled out.

    A generation starts at the extension's creation (generation 1, `metadata.creationTimestamp`) or
    at the first reconcile that sees it (a spec change); it ends at the first status write that
    says it is rolled out (`rolled_out`), and is observed once. An extension first seen already
    rolled out (after a restart of the process) is not observed; one first seen at a later
    generation that is not rolled out yet is timed from then, so after a restart an update's
    duration can be short by the time the process was away. Only the process's memory is used.
    """

    def __init__(
        self, histogram: Histogram = INSTALL_DURATION, *, now: Callable[[], float] = time.time
    ) -> None:
        self._histogram = histogram
        self._now = now
        self._generations: dict[str, _Generation] = {}

    def observe(
        self,
        extension: Mapping[str, Any],
        before: Sequence[Mapping[str, Any]],
        after: Sequence[Mapping[str, Any]],
    ) -> float | None:
        """After a status write: `before` and `after` are the conditions around it. Returns the
        duration observed, if this write completed a generation."""
        metadata = extension.get("metadata") or {}
        name = str(metadata.get("name") or "")
        number = int(metadata.get("generation") or 1)
        known = self._generations.get(name)
        if known is None or known.number != number:
            if known is None and rolled_out(before, number):
                self._generations[name] = _Generation(number, 0.0, Change.UPDATED, observed=True)
                return None
            if known is None and number == 1:
                created = _parse_time(metadata.get("creationTimestamp"))
                known = _Generation(number, self._now() if created is None else created, Change.CREATED)
            else:
                known = _Generation(number, self._now(), Change.UPDATED)
            self._generations[name] = known
        if known.observed or not rolled_out(after, number):
            return None
        known.observed = True
        seconds = max(0.0, self._now() - known.started)
        self._histogram.labels(known.change.value).observe(seconds)
        return seconds

    def forget(self, name: str) -> None:
        self._generations.pop(name, None)


def _parse_time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class CatalogClientCollector:
    """`operator_controller_catalog_*`, read from a `CatalogClient`'s `statistics()` at scrape time."""

    _COUNTERS = (
        ("requests", "requests", "HTTP requests sent to catalogd's content server."),
        (
            "fetch_bytes",
            "fetched_bytes",
            "Bytes of catalog content received from catalogd, after gzip decoding.",
        ),
        ("cache_hits", "hits", "Package reads answered from the in-memory cache, without a request."),
        (
            "cache_misses",
            "misses",
            "Package reads that asked catalogd (a revalidation answered 304 included).",
        ),
        (
            "not_modified",
            "not_modified",
            "Requests catalogd answered 304 Not Modified: content reused across catalog digests.",
        ),
        (
            "all_fallbacks",
            "fallbacks",
            "Packages read by streaming the whole catalog, the server lacking the metas endpoint.",
        ),
    )

    def __init__(self, statistics: Callable[[], Statistics]) -> None:
        self._statistics = statistics

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        statistics = self._statistics()
        for suffix, field, documentation in self._COUNTERS:
            counter = CounterMetricFamily(f"operator_controller_catalog_{suffix}", documentation)
            counter.add_metric([], float(getattr(statistics, field)))
            yield counter
        yield GaugeMetricFamily(
            "operator_controller_catalog_cache_bytes",
            "Bytes of catalog responses held in the in-memory cache.",
            value=float(statistics.cached_bytes),
        )


def register_catalog_client(statistics: Callable[[], Statistics]) -> CatalogClientCollector:
    """Serve `statistics()` on the runtime's registry (once per process)."""
    collector = CatalogClientCollector(statistics)
    REGISTRY.register(collector)
    return collector
