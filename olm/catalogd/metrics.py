"""catalogd's own metrics, on the runtime's registry (served by the manager's `/metrics`).

Process metrics are prefixed `catalogd_`; the per-object gauge is prefixed with the kind it
describes (`olm_clustercatalog_`), as kube-state-metrics names its `kube_<kind>_` families. Every
family is documented in `docs/observability/metrics.md`, with how to alert on it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import Counter, Histogram
from prometheus_client.core import CounterMetricFamily

from olm.api import conditions as api
from olm_runtime.metrics import REGISTRY, ConditionGauge

__all__ = [
    "CONDITIONS",
    "REGISTRY",
    "REQUEST_DURATION",
    "REQUEST_DURATION_BUCKETS",
    "RESPONSE_BYTES",
    "UNPACK_DURATION",
    "UNPACK_SIZE",
    "Endpoint",
    "RegistryClientCollector",
    "UnpackResult",
    "register_registry_client",
]

REQUEST_DURATION_BUCKETS = (
    0.1,
    0.2,
    0.3,
    0.4,
    0.5,
    0.6,
    0.7,
    0.8,
    0.9,
    1.0,
    1.2,
    1.6,
    2.0,
    2.4,
    2.8,
    3.2,
    3.6,
    4.0,
    10.0,
)
"""Upstream catalogd's buckets, so its dashboards read this histogram unchanged."""

REQUEST_DURATION = Histogram(
    "catalogd_http_request_duration_seconds",
    "Time catalogd's content server took to answer a request, until the last byte was written.",
    ("code",),
    buckets=REQUEST_DURATION_BUCKETS,
    registry=REGISTRY,
)
"""`catalogd_http_request_duration_seconds{code}`."""


class Endpoint(enum.StrEnum):
    """Values of the `endpoint` label of the content server's byte counter."""

    ALL = "all"
    METAS = "metas"
    OTHER = "other"
    """Any path that is not a catalog endpoint (answered 404)."""


RESPONSE_BYTES = Counter(
    "catalogd_http_response_bytes_total",
    "Bytes catalogd's content server wrote for responses, headers included, as sent (gzip-compressed "
    "when negotiated), by endpoint and status code.",
    ("endpoint", "code"),
    registry=REGISTRY,
)
"""`catalogd_http_response_bytes_total{endpoint,code}`."""


class UnpackResult(enum.StrEnum):
    """Values of the `result` label of the unpack histogram."""

    SUCCESS = "success"
    """The image's catalog was stored and is served."""
    ERROR = "error"
    """Pulling, extracting, validating or storing failed; what was served before stays served."""


UNPACK_DURATION = Histogram(
    "catalogd_unpack_duration_seconds",
    "Time to make a catalog image served content: pull, extract, validate and store.",
    ("result",),
    buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0),
    registry=REGISTRY,
)
"""`catalogd_unpack_duration_seconds{result}`: one per unpack of a digest this replica did not serve."""

UNPACK_SIZE = Histogram(
    "catalogd_unpack_size_bytes",
    "Size of each catalog stored after an unpack, as served uncompressed by the all endpoint.",
    buckets=tuple(float(1 << shift) for shift in range(16, 33, 2)),  # 64 KiB to 4 GiB, by fours
    registry=REGISTRY,
)
"""`catalogd_unpack_size_bytes`: its `_sum` is the bytes unpacked since the process started."""

CONDITIONS = ConditionGauge(
    "olm_clustercatalog_status_condition",
    "The current status and reason of a ClusterCatalog's conditions (1 for the reported pair).",
    types=(api.TYPE_SERVING, api.TYPE_PROGRESSING),
    registry=REGISTRY,
)
"""`olm_clustercatalog_status_condition{name,type,status,reason}`, reported by the leader."""

# Every bounded series exists from the start, so rates and alerts work before the first event.
for _result in UnpackResult:
    UNPACK_DURATION.labels(_result.value)


class RegistryClientCollector:
    """`catalogd_registry_*` counters read from an `oci.RegistryClient`'s `statistics()` at scrape time.

    They show what pulls cost: `catalogd_registry_blob_requests_total` stays flat when catalogs are
    served again from the blob cache (after a restart, say), which `..._blob_cache_hits_total` counts.
    """

    _FIELDS = (
        ("manifest_requests", "Manifest requests sent to registries (tag resolutions included)."),
        ("blob_requests", "Blob (config and layer) downloads started."),
        ("token_requests", "Bearer token requests."),
        ("retries", "Registry requests retried after a transient failure."),
        ("bytes_downloaded", "Bytes of blobs and manifests downloaded."),
        ("blob_cache_hits", "Blobs found in the on-disk cache instead of downloaded."),
    )

    def __init__(self, statistics: Callable[[], Any]) -> None:
        self._statistics = statistics

    def collect(self) -> Iterator[CounterMetricFamily]:
        statistics = self._statistics()
        for field, documentation in self._FIELDS:
            family = CounterMetricFamily(f"catalogd_registry_{field}", documentation)
            family.add_metric([], float(getattr(statistics, field)))
            yield family


def register_registry_client(statistics: Callable[[], Any]) -> RegistryClientCollector:
    """Serve `statistics()` on the runtime's registry (once per process)."""
    collector = RegistryClientCollector(statistics)
    REGISTRY.register(collector)
    return collector
