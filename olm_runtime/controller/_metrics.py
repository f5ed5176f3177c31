"""The `controller_runtime_*` Prometheus families (controller-runtime's names), for `Controller`.

`CONTROLLER` holds them on the runtime's registry; a test builds its own `ControllerMetrics` on a
fresh `CollectorRegistry` and reads values back with `registry.get_sample_value(...)`.
"""

from __future__ import annotations

import enum

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from olm_runtime.metrics import REGISTRY

__all__ = ["CONTROLLER", "RECONCILE_TIME_BUCKETS", "ControllerMetrics", "ReconcileResult"]


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
