"""The runtime's Prometheus registry: the one the manager serves on `/metrics`.

Everything in `olm_runtime` registers on `REGISTRY`, under the names client-go and controller-runtime
use, so dashboards and alerts written for Go controllers work unchanged. Each family is defined
beside the package that feeds it: `workqueue_*` in `olm_runtime.workqueue` (`WorkqueueMetrics`),
`controller_runtime_*` in `olm_runtime.controller`, `informer_*` in `olm_runtime.cache`
(`CacheMetrics`), `rest_client_*` in `olm_runtime.client`, and the leader-election, webhook and
certificate families in `olm_runtime.manager`. The registry also carries the process,
platform and garbage-collector collectors of `prometheus_client`, the Python counterparts of
controller-runtime's process and Go runtime collectors.

`ConditionGauge` is for controllers that want their objects' status conditions alertable (what
kube-state-metrics does for built-in kinds): one series per object and condition type.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from prometheus_client import GC_COLLECTOR, PLATFORM_COLLECTOR, PROCESS_COLLECTOR, CollectorRegistry, Gauge

__all__ = ["REGISTRY", "ConditionGauge"]

REGISTRY = CollectorRegistry(auto_describe=True)
"""The runtime's registry; the manager serves it on `/metrics`."""

for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)


class ConditionGauge:
    """`<name>{name, type, status, reason} 1`: each object's conditions of `types`, as last reported.

    Only the current status and reason of an object's condition has a series (an info-style gauge),
    so `max by (name) (<name>{type="Ready", status!="True"}) == 1` with `for: 10m` fires for objects
    not Ready for ten minutes, however often the reason changes meanwhile. Status and reason keep
    the API's spelling, as `kubectl get -o yaml` shows them. A controller calls `set` after each
    status write and `remove` once the object is gone; a condition an object stops reporting loses
    its series. The cardinality is objects x `types`: meant for cluster-scoped kinds an administrator
    creates, not for objects that come and go by the thousand.
    """

    def __init__(
        self, name: str, documentation: str, *, types: Iterable[str], registry: CollectorRegistry
    ) -> None:
        self._gauge = Gauge(name, documentation, ("name", "type", "status", "reason"), registry=registry)
        self._types = tuple(types)
        self._current: dict[tuple[str, str], tuple[str, str]] = {}
        """(object, type) -> (status, reason) of the series that exists."""
        self._lock = threading.Lock()  # the scrape may run on another thread than the controller

    def set(self, name: str, conditions: Iterable[Mapping[str, Any]]) -> None:
        """Report `name`'s conditions (the list of `status.conditions`)."""
        reported = {str(c.get("type")): c for c in conditions}
        with self._lock:
            for kind in self._types:
                condition = reported.get(kind)
                wanted = (
                    (str(condition.get("status") or "Unknown"), str(condition.get("reason") or ""))
                    if condition is not None
                    else None
                )
                current = self._current.get((name, kind))
                if current == wanted:
                    continue
                if current is not None:
                    self._gauge.remove(name, kind, *current)
                    del self._current[(name, kind)]
                if wanted is not None:
                    self._gauge.labels(name, kind, *wanted).set(1)
                    self._current[(name, kind)] = wanted

    def remove(self, name: str) -> None:
        """Drop every series of `name` (the object was deleted)."""
        with self._lock:
            for kind in self._types:
                current = self._current.pop((name, kind), None)
                if current is not None:
                    self._gauge.remove(name, kind, *current)
