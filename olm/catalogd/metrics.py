"""catalogd's own metrics, on the runtime's registry (served by the manager's `/metrics`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import Histogram
from prometheus_client.core import CounterMetricFamily

from olm_runtime.metrics import REGISTRY

__all__ = [
    "REGISTRY",
    "REQUEST_DURATION",
    "REQUEST_DURATION_BUCKETS",
    "RegistryClientCollector",
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
