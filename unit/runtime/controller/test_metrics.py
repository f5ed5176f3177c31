"""Metrics: the controller_runtime_* families, created at zero and bucketed as controller-runtime does."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from olm_runtime.controller._metrics import RECONCILE_TIME_BUCKETS, ControllerMetrics


def test_initialise_creates_every_controller_series_at_zero() -> None:
    registry = CollectorRegistry()
    controller = ControllerMetrics(registry)
    controller.initialise("c", max_concurrent_reconciles=4)
    for result in ["success", "error", "requeue_after"]:
        labels = {"controller": "c", "result": result}
        assert registry.get_sample_value("controller_runtime_reconcile_total", labels) == 0
    for counter in ["errors", "terminal_reconcile_errors", "panics", "timeouts"]:
        name = (
            f"controller_runtime_{counter}_total"
            if counter == "terminal_reconcile_errors"
            else f"controller_runtime_reconcile_{counter}_total"
        )
        assert registry.get_sample_value(name, {"controller": "c"}) == 0
    assert registry.get_sample_value("controller_runtime_max_concurrent_reconciles", {"controller": "c"}) == 4
    assert registry.get_sample_value("controller_runtime_active_workers", {"controller": "c"}) == 0
    assert (
        registry.get_sample_value("controller_runtime_reconcile_time_seconds_count", {"controller": "c"}) == 0
    )


def test_reconcile_time_has_controller_runtime_buckets() -> None:
    assert RECONCILE_TIME_BUCKETS[0] == 0.005
    assert RECONCILE_TIME_BUCKETS[-1] == 60.0
    assert len(RECONCILE_TIME_BUCKETS) == 40
    assert list(RECONCILE_TIME_BUCKETS) == sorted(RECONCILE_TIME_BUCKETS)
