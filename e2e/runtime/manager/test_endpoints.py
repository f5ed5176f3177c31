"""A leader-elected manager serves /healthz, /readyz and /metrics with sane content."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from prometheus_client.parser import text_string_to_metric_families

from olm_runtime import workqueue
from olm_runtime.client import Client
from olm_runtime.manager import Manager
from olm_runtime.testing.process import free_ports

from .conftest import http_get, wait_ready
from .election import electing_manager


def samples(text: str) -> dict[str, dict[frozenset[tuple[str, str]], float]]:
    """Every sample of a Prometheus text page: name -> labels -> value."""
    found: dict[str, dict[frozenset[tuple[str, str]], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[frozenset(sample.labels.items())] = sample.value
    return found


async def test_probes_and_metrics_report_a_leading_synced_manager(
    client: Client, namespace: str, running: Callable[[Manager], asyncio.Task[None]]
) -> None:
    lease = f"endpoints-{uuid.uuid4().hex[:8]}"
    metrics_port, probe_port = free_ports(2)
    manager = electing_manager(
        client,
        lease,
        namespace,
        metrics_bind_address=f"127.0.0.1:{metrics_port}",
        health_probe_bind_address=f"127.0.0.1:{probe_port}",
    )
    queue: workqueue.Queue[str] = workqueue.Queue(name=f"e2e-{lease}")
    queue.add("item")
    running(manager)
    probes, metrics = f"http://127.0.0.1:{probe_port}", f"http://127.0.0.1:{metrics_port}"
    await wait_ready(probes)
    await asyncio.wait_for(manager.elected.wait(), 30)

    status, text = await http_get(f"{probes}/readyz?verbose")
    assert status == 200
    assert text.splitlines() == ["[+]cache-sync ok", "[+]leader-election ok", "readyz check passed"]
    status, text = await http_get(f"{probes}/healthz?verbose")
    assert status == 200
    assert text.splitlines() == ["[+]ping ok", "[+]leader-election ok", "healthz check passed"]
    assert await http_get(f"{probes}/healthz") == (200, "ok")
    assert (await http_get(f"{probes}/metrics"))[0] == 404, "metrics live on their own address"

    status, text = await http_get(f"{metrics}/metrics")
    assert status == 200
    found = samples(text)
    assert found["leader_election_master_status"][frozenset({("name", lease)})] == 1.0
    assert found["leader_election_slowpath_total"][frozenset({("name", lease)})] >= 1.0
    queue_labels = frozenset({("name", f"e2e-{lease}"), ("controller", f"e2e-{lease}")})
    assert found["workqueue_depth"][queue_labels] == 1.0
    assert found["workqueue_adds_total"][queue_labels] == 1.0
    lease_writes = [
        value
        for labels, value in found["rest_client_requests_total"].items()
        if ("method", "PUT") in labels and ("code", "200") in labels
    ]
    assert lease_writes, "lease renewals are PUTs answered 200"
    assert lease_writes[0] >= 1.0
    assert found["process_resident_memory_bytes"][frozenset()] > 0
    assert any(name.startswith("python_gc_") for name in found)
    assert (await http_get(f"{metrics}/readyz"))[0] == 404, "probes live on their own address"
