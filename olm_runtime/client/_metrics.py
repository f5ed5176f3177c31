"""REST client metrics under client-go's names, so dashboards written for Go controllers work."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from olm_runtime.metrics import REGISTRY

LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
"""client-go's request latency buckets."""


class RestClientMetrics:
    """`rest_client_requests_total{code,method,host}` and `rest_client_request_duration_seconds`.

    A request that got no HTTP response counts with `code="<error>"`, as in client-go.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "rest_client_requests_total",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ("code", "method", "host"),
            registry=registry,
        )
        self.latency = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds until the response headers arrived. Broken down by verb and host.",
            ("verb", "host"),
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )


REST_CLIENT = RestClientMetrics(REGISTRY)
"""The REST client metrics on the runtime's registry."""
