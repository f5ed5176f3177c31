"""catalogd's own metrics, on the runtime's registry (served by the manager's `/metrics`)."""

from __future__ import annotations

from prometheus_client import Histogram

from olm_runtime.metrics import REGISTRY

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
