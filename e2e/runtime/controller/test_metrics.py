"""A controller's outcomes, as Prometheus scrapes them from the manager's /metrics endpoint."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from olm_runtime import controller
from olm_runtime.cache import CacheOptions
from olm_runtime.client import Client, kinds
from olm_runtime.manager import Manager, ManagerOptions
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports


def samples(text: str, family: str, **labels: str) -> list[float]:
    found = []
    for metrics_family in text_string_to_metric_families(text):
        for sample in metrics_family.samples:
            if sample.name == family and all(sample.labels.get(k) == v for k, v in labels.items()):
                found.append(sample.value)
    return found


async def test_reconcile_outcomes_and_the_queue_are_scraped_under_the_controllers_name(
    admin_client: Client, namespace: str
) -> None:
    (port,) = free_ports(1)
    manager = Manager(
        admin_client,
        options=ManagerOptions(
            metrics_bind_address=f"127.0.0.1:{port}",
            cache=CacheOptions(namespaces=(namespace,), gc_freeze=False),
        ),
    )
    name = f"metered-{namespace}"
    requeued: set[str] = set()

    async def reconcile(request: controller.Request) -> controller.Result:
        if request.name == "flaky" and "flaky" not in requeued:
            requeued.add("flaky")
            return controller.Result(requeue_after=0.2)
        if request.name == "broken":
            raise controller.TerminalError("InvalidSpec", "nothing a retry can fix")
        return controller.Result()

    await (
        controller.Builder(manager)
        .for_(kinds.CONFIG_MAP)
        .named(name)
        .with_options(controller.Options(max_concurrent_reconciles=2))
        .complete(controller.ReconcilerFunc(reconcile))
    )
    for obj in ("flaky", "broken"):
        await admin_client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": obj, "namespace": namespace}}
        )
    running = asyncio.create_task(manager.run())
    scraped = ""
    try:
        async with aiohttp.ClientSession() as session:

            async def outcomes_scraped() -> bool:
                nonlocal scraped
                try:
                    async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                        scraped = await response.text()
                except aiohttp.ClientConnectionError:
                    return False
                requeue = samples(
                    scraped, "controller_runtime_reconcile_total", controller=name, result="requeue_after"
                )
                terminal = samples(
                    scraped, "controller_runtime_terminal_reconcile_errors_total", controller=name
                )
                success = samples(
                    scraped, "controller_runtime_reconcile_total", controller=name, result="success"
                )
                return requeue == [1.0] and terminal == [1.0] and bool(success) and success[0] >= 2

            await eventually(outcomes_scraped, what="the outcomes on /metrics", timeout=30, interval=0.1)
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
    assert samples(scraped, "controller_runtime_max_concurrent_reconciles", controller=name) == [2.0]
    assert samples(scraped, "workqueue_depth", name=name, controller=name) == [0.0]
    # Adds: flaky, broken and the namespace's kube-root-ca.crt from the initial list, plus flaky's requeue.
    assert samples(scraped, "workqueue_adds_total", name=name, controller=name) == [4.0]
    assert samples(scraped, "workqueue_retries_total", name=name, controller=name) == [1.0]
