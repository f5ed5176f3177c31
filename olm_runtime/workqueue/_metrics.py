"""The `workqueue_*` Prometheus families (client-go's names, labelled as controller-runtime labels them).

A queue created with a `name` registers itself with `WORKQUEUE` (on the runtime's registry) unless
given another `WorkqueueMetrics`, and feeds the two duration histograms as items move; depth, adds,
retries, unfinished work and the longest running processor are read from the queue's `statistics()`
when the registry is scraped, so no background task keeps gauges fresh and the hot path touches no
lock. A test builds its own `WorkqueueMetrics` on a fresh `CollectorRegistry` and reads values back
with `registry.get_sample_value(...)`.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import threading
import weakref
from collections.abc import Callable, Iterable
from typing import Protocol

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from olm_runtime.metrics import REGISTRY

__all__ = ["WORKQUEUE", "WorkqueueMetrics"]

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
