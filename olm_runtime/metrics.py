"""The runtime's Prometheus metrics: one registry, the workqueue families and the controller families.

`REGISTRY` is the registry the manager's `/metrics` endpoint serves. Everything in `olm_runtime`
registers there, under the names client-go and controller-runtime use, so dashboards and alerts
written for Go controllers work unchanged. It also carries the process, platform and garbage-collector
collectors of `prometheus_client`, the Python counterparts of controller-runtime's process and Go
runtime collectors.

Two bundles are built on it:

- `WORKQUEUE` (`WorkqueueMetrics`): the `workqueue_*` families. A queue created with a `name` registers
  itself here and feeds the two duration histograms as items move; depth, adds, retries, unfinished
  work and the longest running processor are read from the queue's `statistics()` when the registry
  is scraped, so no background task keeps gauges fresh and the hot path touches no lock.
- `CONTROLLER` (`ControllerMetrics`): the `controller_runtime_*` families, for the controller package.

Both classes take the registry in their constructor, so a test can build its own on a fresh
`CollectorRegistry` and read values back with `registry.get_sample_value(...)`.
"""

from __future__ import annotations

import bisect
import dataclasses
import enum
import itertools
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Protocol

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

REGISTRY = CollectorRegistry(auto_describe=True)
"""The runtime's registry; the manager serves it on `/metrics`."""

for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)

# Workqueue families (client-go names, labelled as controller-runtime labels them).

WORKQUEUE_LABELS = ("name", "controller")
"""Labels of every `workqueue_*` series: both carry the queue's name, as in controller-runtime."""

WORKQUEUE_DURATION_BUCKETS = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1000.0)
"""Ten nanoseconds to a thousand seconds, one bucket per power of ten (client-go's buckets)."""

_BUCKET_BOUNDS = (*(repr(bound) for bound in WORKQUEUE_DURATION_BUCKETS), "+Inf")  # `le` label values


class WorkqueueStatistics(Protocol):
    """What the workqueue collector reads from a queue at scrape time."""

    @property
    def depth(self) -> int: ...
    @property
    def adds(self) -> int: ...
    @property
    def retries(self) -> int: ...
    @property
    def unfinished_work_seconds(self) -> float: ...
    @property
    def longest_running_processor_seconds(self) -> float: ...


class WorkqueueSource(Protocol):
    """A queue, as far as its metrics are concerned."""

    def statistics(self) -> WorkqueueStatistics: ...


class DurationHistogram:
    """A histogram over `WORKQUEUE_DURATION_BUCKETS` that a queue feeds on its hot path.

    `observe` is a bisect and two additions, several times cheaper than a `prometheus_client`
    histogram child (no lock, no per-bucket loop); the collector turns the counts into a histogram
    family at scrape time. Only the event loop's thread observes.
    """

    __slots__ = ("_counts", "_sum")

    def __init__(self) -> None:
        self._counts = [0] * (len(WORKQUEUE_DURATION_BUCKETS) + 1)  # per bucket, the last is +Inf
        self._sum = 0.0

    def observe(self, seconds: float) -> None:
        """Count one duration."""
        self._counts[bisect.bisect_left(WORKQUEUE_DURATION_BUCKETS, seconds)] += 1
        self._sum += seconds

    def snapshot(self) -> tuple[list[tuple[str, float]], float]:
        """Cumulative `(le, count)` pairs ending with +Inf, and the sum."""
        total_sum = self._sum
        cumulative = list(itertools.accumulate(self._counts))
        return list(zip(_BUCKET_BOUNDS, cumulative, strict=True)), total_sum


@dataclasses.dataclass(frozen=True, slots=True)
class WorkqueueRecorder:
    """The event-time half of a named queue's metrics: observe one duration in seconds each."""

    queue_duration: Callable[[float], None]
    """Time an item waited between being added and being handed out by `get`."""
    work_duration: Callable[[float], None]
    """Time between `get` handing an item out and `done` for it."""


class WorkqueueMetrics(Collector):
    """The `workqueue_*` families on one registry, and the queues that feed them.

    - `workqueue_depth` (gauge): items waiting to be handed out, including those re-added while in flight.
    - `workqueue_adds_total` (counter): adds that marked an item for processing (merged duplicates
      are not counted).
    - `workqueue_queue_duration_seconds` (histogram): time from add to `get`.
    - `workqueue_work_duration_seconds` (histogram): time from `get` to `done`.
    - `workqueue_unfinished_work_seconds` (gauge): summed age of all items in flight; a steady climb
      means stuck workers, and its slope says how many.
    - `workqueue_longest_running_processor_seconds` (gauge): age of the oldest item in flight.
    - `workqueue_retries_total` (counter): delayed adds, that is `add_after` and `add_rate_limited`.

    Everything is produced at scrape time: the gauges and counters from each queue's `statistics()`,
    the histograms from the `DurationHistogram`s the queues feed. Queues sharing a name add up (the
    longest running processor takes the maximum) and share histograms. A queue is held weakly: once
    it is garbage its gauges and counters vanish from the scrape (Prometheus reads a counter reset);
    the histograms of a name stay.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self._sources: dict[str, weakref.WeakSet[WorkqueueSource]] = {}
        self._histograms: dict[str, tuple[DurationHistogram, DurationHistogram]] = {}
        # The scrape may run on a metrics-server thread while queues register on the loop thread.
        self._lock = threading.Lock()
        registry.register(self)

    def register(self, name: str, source: WorkqueueSource) -> WorkqueueRecorder:
        """Report `source` under `name` from now on; returns what it calls as items move."""
        if not name:
            raise ValueError("a workqueue reports metrics only under a non-empty name")
        with self._lock:
            self._sources.setdefault(name, weakref.WeakSet()).add(source)
            queue_duration, work_duration = self._histograms.setdefault(
                name, (DurationHistogram(), DurationHistogram())
            )
        return WorkqueueRecorder(queue_duration=queue_duration.observe, work_duration=work_duration.observe)

    def describe(self) -> Iterable[Metric]:
        return self._families({}, {})

    def collect(self) -> Iterable[Metric]:
        with self._lock:
            sources = {name: list(queues) for name, queues in self._sources.items()}
            for name in [name for name, queues in sources.items() if not queues]:
                del self._sources[name]
            histograms = dict(self._histograms)
        return self._families(sources, histograms)

    @staticmethod
    def _families(
        sources: dict[str, list[WorkqueueSource]],
        histograms: dict[str, tuple[DurationHistogram, DurationHistogram]],
    ) -> list[Metric]:
        labels = list(WORKQUEUE_LABELS)
        depth = GaugeMetricFamily("workqueue_depth", "Current depth of the workqueue.", labels=labels)
        adds = CounterMetricFamily(
            "workqueue_adds", "Total number of adds handled by the workqueue.", labels=labels
        )
        queue_duration = HistogramMetricFamily(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in the workqueue before being handed out.",
            labels=labels,
        )
        work_duration = HistogramMetricFamily(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from the workqueue takes.",
            labels=labels,
        )
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work is in progress and not yet observed by work_duration. Large values "
            "indicate stuck workers; the rate at which it grows tells how many are stuck.",
            labels=labels,
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds the longest running processor of the workqueue has been running.",
            labels=labels,
        )
        retries = CounterMetricFamily(
            "workqueue_retries",
            "Total number of delayed adds (add_after and add_rate_limited) handled by the workqueue.",
            labels=labels,
        )
        for name, queues in sources.items():
            if not queues:
                continue
            stats = [queue.statistics() for queue in queues]
            values = [name, name]
            depth.add_metric(values, sum(s.depth for s in stats))
            adds.add_metric(values, sum(s.adds for s in stats))
            unfinished.add_metric(values, sum(s.unfinished_work_seconds for s in stats))
            longest.add_metric(values, max(s.longest_running_processor_seconds for s in stats))
            retries.add_metric(values, sum(s.retries for s in stats))
        for name, (queued, worked) in histograms.items():
            for family, histogram in ((queue_duration, queued), (work_duration, worked)):
                buckets, total = histogram.snapshot()
                family.add_metric([name, name], buckets, total)
        return [depth, adds, queue_duration, work_duration, unfinished, longest, retries]


WORKQUEUE = WorkqueueMetrics(REGISTRY)
"""The workqueue metrics on `REGISTRY`; named queues report here unless given another."""


# Controller families (controller-runtime names).


class ReconcileResult(enum.StrEnum):
    """Values of the `result` label of `controller_runtime_reconcile_total`.

    controller-runtime also has "requeue", for its deprecated bare requeue flag; olm_runtime has a
    single spelling for "come back later" (`requeue_after`), so that value never occurs.
    """

    SUCCESS = "success"
    """The reconcile returned without asking to come back."""
    ERROR = "error"
    """The reconcile raised, terminal errors included."""
    REQUEUE_AFTER = "requeue_after"
    """The reconcile returned a result asking to run again after a delay."""


RECONCILE_TIME_BUCKETS = (
    *(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5),
    *(0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0),
    *(6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0),
)
"""Five milliseconds to a minute, fine below a second (controller-runtime's buckets)."""


class ControllerMetrics:
    """The `controller_runtime_*` families on one registry, all labelled by `controller`.

    How a controller is expected to use them, matching controller-runtime:

    - at start, `initialise(name, max_concurrent_reconciles=n)` so every series exists at zero;
    - around each reconcile, `active_workers` +1/-1 and `reconcile_time` observes the duration;
    - afterwards exactly one `reconcile_total` result. A raised exception counts `ERROR` and
      `reconcile_errors`; a terminal error counts `terminal_reconcile_errors` as well; an exception
      the reconciler did not mean to raise (a bug, caught by the worker) also counts
      `reconcile_panics`; a reconcile stopped by the per-reconcile timeout counts `reconcile_timeouts`.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller, by result.",
            ("controller", "result"),
            registry=registry,
        )
        """`controller_runtime_reconcile_total{controller,result}`: one per finished reconcile."""
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller.",
            ("controller",),
            registry=registry,
        )
        """`controller_runtime_reconcile_errors_total{controller}`: reconciles that raised (terminal too)."""
        self.terminal_reconcile_errors = Counter(
            "controller_runtime_terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller.",
            ("controller",),
            registry=registry,
        )
        """`controller_runtime_terminal_reconcile_errors_total{controller}`: errors not retried."""
        self.reconcile_panics = Counter(
            "controller_runtime_reconcile_panics_total",
            "Total number of reconciliation panics per controller.",
            ("controller",),
            registry=registry,
        )
        """`controller_runtime_reconcile_panics_total{controller}`: unexpected exceptions the worker
        caught (controller-runtime's recovered panics)."""
        self.reconcile_timeouts = Counter(
            "controller_runtime_reconcile_timeouts_total",
            "Total number of reconciliation timeouts per controller.",
            ("controller",),
            registry=registry,
        )
        """`controller_runtime_reconcile_timeouts_total{controller}`: reconciles cancelled by the
        controller's per-reconcile timeout (not by shutdown, not by the reconciler itself)."""
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller.",
            ("controller",),
            buckets=RECONCILE_TIME_BUCKETS,
            registry=registry,
        )
        """`controller_runtime_reconcile_time_seconds{controller}`: duration of each reconcile."""
        self.max_concurrent_reconciles = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller.",
            ("controller",),
            registry=registry,
        )
        """`controller_runtime_max_concurrent_reconciles{controller}`: the configured worker count."""
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller.",
            ("controller",),
            registry=registry,
        )
        """`controller_runtime_active_workers{controller}`: workers inside a reconcile right now."""

    def initialise(self, controller: str, *, max_concurrent_reconciles: int) -> None:
        """Create every series of `controller` at zero, so rates and alerts work before the first event."""
        for result in ReconcileResult:
            self.reconcile_total.labels(controller, result.value).inc(0)
        for counter in (
            self.reconcile_errors,
            self.terminal_reconcile_errors,
            self.reconcile_panics,
            self.reconcile_timeouts,
        ):
            counter.labels(controller).inc(0)
        self.reconcile_time.labels(controller)
        self.max_concurrent_reconciles.labels(controller).set(max_concurrent_reconciles)
        self.active_workers.labels(controller).set(0)


CONTROLLER = ControllerMetrics(REGISTRY)
"""The controller metrics on `REGISTRY`."""
