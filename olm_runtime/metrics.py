"""The runtime's Prometheus registry: the one the manager serves on `/metrics`.

Everything in `olm_runtime` registers on `REGISTRY`, under the names client-go and controller-runtime
use, so dashboards and alerts written for Go controllers work unchanged. Each family is defined
beside the package that feeds it: `workqueue_*` in `olm_runtime.workqueue` (`WorkqueueMetrics`),
`controller_runtime_*` in `olm_runtime.controller`, `informer_*` in `olm_runtime.cache`
(`CacheMetrics`), `rest_client_*` in `olm_runtime.client`, and the leader-election, webhook and
certificate families in `olm_runtime.manager`. The registry also carries the process,
platform and garbage-collector collectors of `prometheus_client`, the Python counterparts of
controller-runtime's process and Go runtime collectors.
"""

from __future__ import annotations

from prometheus_client import GC_COLLECTOR, PLATFORM_COLLECTOR, PROCESS_COLLECTOR, CollectorRegistry

__all__ = ["REGISTRY"]

REGISTRY = CollectorRegistry(auto_describe=True)
"""The runtime's registry; the manager serves it on `/metrics`."""

for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)
