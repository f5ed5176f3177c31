"""Metrics: workqueue_* values read back from a registry after queue operations."""

from __future__ import annotations

import gc

import pytest
from prometheus_client import CollectorRegistry

from olm_runtime import clock, metrics, workqueue

LABELS = {"name": "q", "controller": "q"}


def _named_queue() -> tuple[workqueue.RateLimitingQueue[str], clock.FakeClock, CollectorRegistry]:
    registry = CollectorRegistry()
    fake = clock.FakeClock()
    queue = workqueue.RateLimitingQueue[str](
        name="q", clock=fake, metrics=workqueue.WorkqueueMetrics(registry)
    )
    return queue, fake, registry


def _value(registry: CollectorRegistry, sample: str) -> float | None:
    return registry.get_sample_value(sample, LABELS)


async def test_a_named_queue_reports_depth_adds_and_retries() -> None:
    queue, _, registry = _named_queue()
    for item in ["a", "b", "a"]:
        queue.add(item)
    queue.add_rate_limited("c")
    queue.add_after("d", 0.0)
    assert _value(registry, "workqueue_depth") == 3  # a, b, d; c is still waiting
    assert _value(registry, "workqueue_adds_total") == 3
    assert _value(registry, "workqueue_retries_total") == 2
    await queue.get()
    assert _value(registry, "workqueue_depth") == 2


async def test_depth_counts_an_item_readded_while_in_flight() -> None:
    queue, _, registry = _named_queue()
    queue.add("a")
    await queue.get()
    queue.add("a")
    assert _value(registry, "workqueue_depth") == 1
    assert _value(registry, "workqueue_adds_total") == 2


async def test_queue_duration_is_observed_when_an_item_is_handed_out() -> None:
    queue, fake, registry = _named_queue()
    queue.add("a")
    fake.advance(0.5)
    await queue.get()
    assert _value(registry, "workqueue_queue_duration_seconds_count") == 1
    assert _value(registry, "workqueue_queue_duration_seconds_sum") == 0.5
    bucket = {**LABELS, "le": "1.0"}
    assert registry.get_sample_value("workqueue_queue_duration_seconds_bucket", bucket) == 1
    bucket = {**LABELS, "le": "0.1"}
    assert registry.get_sample_value("workqueue_queue_duration_seconds_bucket", bucket) == 0


async def test_queue_duration_of_a_delayed_item_starts_when_its_delay_has_passed() -> None:
    queue, fake, registry = _named_queue()
    queue.add_after("a", 10.0)
    fake.advance(10.0)
    fake.advance(0.25)
    await queue.get()
    assert _value(registry, "workqueue_queue_duration_seconds_sum") == 0.25


async def test_work_duration_is_observed_at_done() -> None:
    queue, fake, registry = _named_queue()
    queue.add("a")
    item = await queue.get()
    fake.advance(2.0)
    queue.done(item)
    assert _value(registry, "workqueue_work_duration_seconds_count") == 1
    assert _value(registry, "workqueue_work_duration_seconds_sum") == 2.0


async def test_unfinished_work_and_longest_running_processor_are_computed_at_scrape_time() -> None:
    queue, fake, registry = _named_queue()
    queue.add("a")
    queue.add("b")
    a = await queue.get()
    fake.advance(3.0)
    b = await queue.get()
    fake.advance(1.0)
    assert _value(registry, "workqueue_unfinished_work_seconds") == 5.0  # 4 s + 1 s
    assert _value(registry, "workqueue_longest_running_processor_seconds") == 4.0
    fake.advance(1.0)  # no queue operation in between: the scrape reads the time itself
    assert _value(registry, "workqueue_longest_running_processor_seconds") == 5.0
    queue.done(a)
    queue.done(b)
    assert _value(registry, "workqueue_unfinished_work_seconds") == 0.0
    assert _value(registry, "workqueue_longest_running_processor_seconds") == 0.0


async def test_a_queue_without_a_name_records_no_metrics() -> None:
    registry = CollectorRegistry()
    queue = workqueue.Queue[str](metrics=workqueue.WorkqueueMetrics(registry))
    queue.add("a")
    queue.done(await queue.get())
    samples = [sample for family in registry.collect() for sample in family.samples]
    assert samples == []


async def test_queues_sharing_a_name_add_up() -> None:
    registry = CollectorRegistry()
    provider = workqueue.WorkqueueMetrics(registry)
    fake = clock.FakeClock()
    first = workqueue.Queue[str](name="q", clock=fake, metrics=provider)
    second = workqueue.Queue[str](name="q", clock=fake, metrics=provider)
    first.add("a")
    second.add("a")
    second.add("b")
    await first.get()
    fake.advance(2.0)
    await second.get()
    fake.advance(1.0)
    assert _value(registry, "workqueue_depth") == 1
    assert _value(registry, "workqueue_adds_total") == 3
    assert _value(registry, "workqueue_unfinished_work_seconds") == 4.0
    assert _value(registry, "workqueue_longest_running_processor_seconds") == 3.0


async def test_a_garbage_queue_stops_reporting() -> None:
    queue, _, registry = _named_queue()
    queue.add("a")
    assert _value(registry, "workqueue_depth") == 1
    del queue
    gc.collect()
    assert _value(registry, "workqueue_depth") is None


def test_workqueue_families_have_client_go_names_labels_and_buckets() -> None:
    registry = CollectorRegistry()
    queue = workqueue.Queue[str](
        name="q", clock=clock.FakeClock(), metrics=workqueue.WorkqueueMetrics(registry)
    )
    families = {family.name: family for family in registry.collect()}
    assert {name: family.type for name, family in families.items()} == {
        "workqueue_depth": "gauge",
        "workqueue_adds": "counter",
        "workqueue_queue_duration_seconds": "histogram",
        "workqueue_work_duration_seconds": "histogram",
        "workqueue_unfinished_work_seconds": "gauge",
        "workqueue_longest_running_processor_seconds": "gauge",
        "workqueue_retries": "counter",
    }
    for family in families.values():
        for sample in family.samples:
            assert {key: value for key, value in sample.labels.items() if key != "le"} == LABELS
    buckets = [
        sample.labels["le"]
        for sample in families["workqueue_queue_duration_seconds"].samples
        if sample.name.endswith("_bucket")
    ]
    expected = ["1e-08", "1e-07", "1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1.0", "10.0"]
    assert buckets == [*expected, "100.0", "1000.0", "+Inf"]
    assert queue.name == "q"


def test_a_named_queue_reports_to_the_runtime_registry_by_default() -> None:
    queue = workqueue.Queue[str](name="test-default-provider")
    queue.add("a")
    labels = {"name": "test-default-provider", "controller": "test-default-provider"}
    assert metrics.REGISTRY.get_sample_value("workqueue_depth", labels) == 1
    queue.shut_down()


def test_an_empty_metrics_name_is_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        workqueue.WorkqueueMetrics(CollectorRegistry()).register("", workqueue.Queue[str]())
