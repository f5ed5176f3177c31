"""The workqueue's public surface is pinned: changing it must be a decision, not an accident."""

from __future__ import annotations

from olm_runtime import workqueue


def test_workqueue_exports_exactly_these_names() -> None:
    assert sorted(workqueue.__all__) == [
        "BucketRateLimiter",
        "DelayingQueue",
        "ItemExponentialFailureRateLimiter",
        "MaxOfRateLimiter",
        "Queue",
        "RateLimiter",
        "RateLimitingQueue",
        "ShutDown",
        "Statistics",
        "WorkqueueMetrics",
        "default_controller_rate_limiter",
    ]
    for name in workqueue.__all__:
        assert getattr(workqueue, name) is not None


def test_queue_methods_are_pinned() -> None:
    def methods(cls: type) -> set[str]:
        return {name for name in dir(cls) if not name.startswith("_")}

    queue = {"add", "get", "done", "shut_down", "shut_down_with_drain", "shutting_down", "statistics"}
    queue |= {"name", "clock"}
    assert methods(workqueue.Queue) == queue
    assert methods(workqueue.DelayingQueue) == queue | {"add_after"}
    limiting = queue | {"add_after", "add_rate_limited", "forget", "num_requeues", "rate_limiter"}
    assert methods(workqueue.RateLimitingQueue) == limiting
