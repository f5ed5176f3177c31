"""Controller promises on the real control plane: one worker per key under a flood of events,
retries that back off, terminal errors that do not retry."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable

from olm_runtime import controller, metrics
from olm_runtime.client import Client, errors, kinds
from olm_runtime.manager import Manager
from olm_runtime.testing.poll import eventually


async def test_the_same_key_is_never_reconciled_concurrently_under_a_flood(
    admin_client: Client, manager: Manager, start: Callable[[], None], namespace: str
) -> None:
    names = [f"cm-{i}" for i in range(10)]
    for name in names:
        await admin_client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
        )
    in_flight: set[controller.Request] = set()
    overlaps: list[controller.Request] = []
    seen: dict[str, str] = {}

    async def reconcile(request: controller.Request) -> controller.Result:
        if request in in_flight:
            overlaps.append(request)
        in_flight.add(request)
        try:
            cm = await manager.reader.get(kinds.CONFIG_MAP, request.name, namespace=request.namespace)
            await asyncio.sleep(0.002)  # hold the key while other events for it arrive
            seen[request.name] = cm.get("data", {}).get("n", "")
        finally:
            in_flight.discard(request)
        return controller.Result()

    options = controller.Options(max_concurrent_reconciles=8)
    await (
        controller.Builder(manager)
        .for_(kinds.CONFIG_MAP)
        .named("flood")
        .with_options(options)
        .complete(controller.ReconcilerFunc(reconcile))
    )
    start()

    async def update(name: str, rounds: int) -> None:
        for n in range(rounds):
            await admin_client.patch(kinds.CONFIG_MAP, name, {"data": {"n": str(n)}}, namespace=namespace)

    await asyncio.gather(*(update(name, 30) for name in names))

    async def all_seen_last_write() -> bool:
        return all(seen.get(name) == "29" for name in names)

    await eventually(all_seen_last_write, what="every key to see its last write")
    assert overlaps == []


async def test_failures_back_off_and_terminal_errors_stop(
    admin_client: Client, manager: Manager, start: Callable[[], None], namespace: str
) -> None:
    attempts: dict[str, list[float]] = {"flaky": [], "broken": []}

    async def reconcile(request: controller.Request) -> controller.Result:
        if request.name not in attempts:
            return controller.Result()  # e.g. the namespace's kube-root-ca.crt
        attempts[request.name].append(time.monotonic())
        if request.name == "broken":
            raise controller.TerminalError("InvalidSpec", "nothing a retry can fix")
        if len(attempts["flaky"]) < 6:
            raise errors.APIError(500, "InternalError", "not yet")
        return controller.Result()

    await (
        controller.Builder(manager)
        .for_(kinds.CONFIG_MAP)
        .named("retries")
        .complete(controller.ReconcilerFunc(reconcile))
    )
    start()
    for name in attempts:
        await admin_client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
        )

    async def attempted(name: str, times: int) -> bool:
        return len(attempts[name]) == times

    await eventually(lambda: attempted("flaky", 6), what="the flaky key to succeed")
    gaps = [b - a for a, b in itertools.pairwise(attempts["flaky"])]
    # Each retry waits at least its backoff (5 ms doubling); a loaded machine may add to it, never
    # take from it, so only the lower bounds are asserted.
    minimum = [0.005 * 2**attempt for attempt in range(len(gaps))]
    assert all(gap >= least for gap, least in zip(gaps, minimum, strict=True)), (gaps, minimum)
    retries = metrics.REGISTRY.get_sample_value(
        "workqueue_retries_total", {"name": "retries", "controller": "retries"}
    )
    assert retries == 5
    assert len(attempts["broken"]) == 1
    # Only a change of the object brings a terminally failed key back.
    await admin_client.patch(kinds.CONFIG_MAP, "broken", {"data": {"fixed": "yes"}}, namespace=namespace)
    await eventually(lambda: attempted("broken", 2), what="the changed object to be reconciled")
