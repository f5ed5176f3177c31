"""Prometheus families for informers, read from `Cache.statistics()` at scrape time.

Every `Cache` registers itself (weakly) with `CACHE` unless given another `CacheMetrics`; nothing is
updated on the event path. Series are labelled by `informer` (its watch, e.g.
`v1/configmaps namespace=team-a`) and, for per-watch figures, `reflector`.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from typing import Protocol

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from olm_runtime import metrics
from olm_runtime.cache._informer import InformerStatistics

__all__ = ["CACHE", "CacheMetrics"]


class _Source(Protocol):
    def statistics(self) -> list[InformerStatistics]: ...


class CacheMetrics(Collector):
    """Informer and watch health:

    - `informer_synced` (gauge, 0/1) and `informer_objects` (gauge) per informer;
    - `informer_watch_age_seconds`: how long the current watch has been open (absent while none is);
    - `informer_last_event_age_seconds`: time since the watch last heard from the server (an event,
      a bookmark, a list): the signal for a watch that is down; the watchdog keeps it below its
      inactivity timeout while the server is reachable;
    - counters `informer_lists_total`, `informer_watches_total`, `informer_watchdog_reconnects_total`,
      `informer_expired_total` (410 Gone), `informer_throttled_total` (429), `informer_errors_total`.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self._sources: weakref.WeakSet[_Source] = weakref.WeakSet()
        self._lock = threading.Lock()
        registry.register(self)

    def register(self, source: _Source) -> None:
        with self._lock:
            self._sources.add(source)

    def describe(self) -> Iterable[Metric]:
        return self._families([])

    def collect(self) -> Iterable[Metric]:
        with self._lock:
            sources = list(self._sources)
        return self._families([s for source in sources for s in source.statistics()])

    @staticmethod
    def _families(informers: list[InformerStatistics]) -> list[Metric]:
        by_informer = ["informer"]
        by_reflector = ["informer", "reflector"]
        synced = GaugeMetricFamily(
            "informer_synced", "Whether the informer has synced (1) or not (0).", labels=by_informer
        )
        objects = GaugeMetricFamily(
            "informer_objects", "Objects in the informer's store.", labels=by_informer
        )
        watch_age = GaugeMetricFamily(
            "informer_watch_age_seconds", "Seconds the current watch has been open.", labels=by_reflector
        )
        event_age = GaugeMetricFamily(
            "informer_last_event_age_seconds",
            "Seconds since the watch last heard from the API server (event, bookmark or list).",
            labels=by_reflector,
        )
        counters = {
            name: CounterMetricFamily(f"informer_{name}", help_text, labels=by_reflector)
            for name, help_text in (
                ("lists", "Lists (paged or streaming) that completed."),
                ("watches", "Watches opened."),
                ("watchdog_reconnects", "Watches closed by the inactivity watchdog and reopened."),
                ("expired", "410 Gone or too-large resourceVersion answers, each followed by a relist."),
                ("throttled", "429 Too Many Requests answers."),
                ("errors", "Failures that cost a backoff."),
            )
        }
        for informer in informers:
            synced.add_metric([informer.name], 1.0 if informer.synced else 0.0)
            objects.add_metric([informer.name], informer.objects)
            for r in informer.reflectors:
                labels = [informer.name, r.name]
                if r.watch_age is not None:
                    watch_age.add_metric(labels, r.watch_age)
                if r.last_event_age is not None:
                    event_age.add_metric(labels, r.last_event_age)
                counters["lists"].add_metric(labels, r.lists + r.streaming_lists)
                counters["watches"].add_metric(labels, r.watches)
                counters["watchdog_reconnects"].add_metric(labels, r.watchdog_reconnects)
                counters["expired"].add_metric(labels, r.expired)
                counters["throttled"].add_metric(labels, r.throttled)
                counters["errors"].add_metric(labels, r.errors)
        return [synced, objects, watch_age, event_age, *counters.values()]


CACHE = CacheMetrics(metrics.REGISTRY)
"""The cache metrics on the runtime's registry (served by the manager's `/metrics`)."""
