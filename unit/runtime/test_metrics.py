"""The runtime's one registry carries every package's families and the process collectors."""

from __future__ import annotations

# Importing a package registers its families on the runtime's registry.
from olm_runtime import controller, metrics, workqueue  # noqa: F401


def test_the_runtime_registry_carries_workqueue_controller_and_process_families() -> None:
    names = {family.name for family in metrics.REGISTRY.collect()}
    assert {
        "controller_runtime_reconcile",
        "controller_runtime_reconcile_errors",
        "controller_runtime_terminal_reconcile_errors",
        "controller_runtime_reconcile_panics",
        "controller_runtime_reconcile_timeouts",
        "controller_runtime_reconcile_time_seconds",
        "controller_runtime_max_concurrent_reconciles",
        "controller_runtime_active_workers",
        "workqueue_depth",
        "workqueue_queue_duration_seconds",
        "python_gc_objects_collected",
        "python_info",
    } <= names
