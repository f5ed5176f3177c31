"""ClusterObjectSet rollout: seconds from creation to Succeeded, API requests, controller memory.

Run: `uv run --frozen python -m hack.bench.cos.rollout [--kubeconfig PATH]` (`make bench-cos`).
Without `--kubeconfig` it starts a control plane of its own (binaries from `hack.controlplane`).
The controller runs in this process. Scenarios use ConfigMaps, whose probes pass at once, so the
figures are the controller's overhead. The controller's requests are the process's
`rest_client_requests_total` minus the benchmark's own create and polls:

- 1 phase x 1 object, 13 phases x 5 objects, 20 phases x 50 objects (the API maximum);
- resident memory of the process before and after the largest rollout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
import uuid
from typing import Any

from hack.bench.cluster import INSTALLER, installer_namespace, kubeconfig_or_control_plane
from hack.bench.measure import own_rss
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller import clusterobjectset
from olm.operator_controller.clusterobjectset import identity
from olm_runtime import conditions
from olm_runtime.client import Client, load_config
from olm_runtime.client._metrics import REST_CLIENT
from olm_runtime.manager import Manager, ManagerOptions
from olm_runtime.testing.poll import eventually
from olm_testkit import crds

FIELD_MANAGER = "bench"
SCENARIOS = ((1, 1), (13, 5), (20, 50))
POLL = 0.05
ROLLOUT_TIMEOUT = 600.0


def rss_mib() -> float:
    return own_rss() / 2**20


def requests_so_far() -> float:
    return sum(
        sample.value
        for metric in REST_CLIENT.requests.collect()
        for sample in metric.samples
        if sample.name.endswith("_total")
    )


def revision(name: str, namespace: str, phases: int, objects: int) -> dict[str, Any]:
    return {
        "apiVersion": CLUSTER_OBJECT_SET.api_version,
        "kind": CLUSTER_OBJECT_SET.kind,
        "metadata": {
            "name": name,
            "annotations": {
                identity.SERVICE_ACCOUNT_NAME: INSTALLER,
                identity.SERVICE_ACCOUNT_NAMESPACE: namespace,
            },
        },
        "spec": {
            "revision": 1,
            "lifecycleState": "Active",
            "collisionProtection": "Prevent",
            "phases": [
                {
                    "name": f"p{p}",
                    "objects": [
                        {
                            "object": {
                                "apiVersion": "v1",
                                "kind": "ConfigMap",
                                "metadata": {"name": f"{name}-{p}-{i}", "namespace": namespace},
                                "data": {"k": "v"},
                            }
                        }
                        for i in range(objects)
                    ],
                }
                for p in range(phases)
            ],
        },
    }


async def prepare(admin: Client, namespace: str) -> None:
    await crds.install(admin, field_manager=FIELD_MANAGER)
    await installer_namespace(admin, namespace)


async def wait_succeeded(observer: Client, name: str) -> int:
    """Poll until the revision has Succeeded; returns how many GETs that took."""
    polls = 0

    async def succeeded() -> bool:
        nonlocal polls
        polls += 1
        cos = await observer.get(CLUSTER_OBJECT_SET, name)
        return conditions.of(cos, "Succeeded").get("status") == "True"

    await eventually(
        succeeded, what=f"ClusterObjectSet {name} to succeed", timeout=ROLLOUT_TIMEOUT, interval=POLL
    )
    return polls


async def run(kubeconfig: str) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    namespace = f"bench-cos-{uuid.uuid4().hex[:6]}"
    async with (
        await Client.connect(config, field_manager=FIELD_MANAGER) as admin,
        await Client.connect(config, field_manager="bench-observer") as observer,
    ):
        await prepare(admin, namespace)
        manager = Manager(admin, options=ManagerOptions(metrics_bind_address="0"))
        await clusterobjectset.setup_with_manager(
            manager, clusterobjectset.Options(system_namespace=namespace)
        )
        task = asyncio.create_task(manager.run())
        try:
            await asyncio.sleep(1.0)  # let the manager start; not part of any figure
            print(f"{'scenario':>16} {'seconds':>8} {'requests':>9} {'rss MiB':>8}")
            for phases, objects in SCENARIOS:
                name = f"bench-{phases}x{objects}-{uuid.uuid4().hex[:4]}"
                before_rss = rss_mib()
                counted_before = requests_so_far()
                started = time.perf_counter()
                await observer.create(revision(name, namespace, phases, objects))
                polls = await wait_succeeded(observer, name)
                elapsed = time.perf_counter() - started
                # Every client of the process counts: take out the create and the polls.
                total = requests_so_far() - counted_before - 1 - polls
                print(
                    f"{f'{phases} x {objects}':>16} {elapsed:8.2f} {total:9.0f} "
                    f"{before_rss:6.0f}->{rss_mib():.0f}"
                )
            print("seconds are measured by polling every 50 ms; requests exclude the benchmark's own")
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--kubeconfig")
    args = parser.parse_args()
    with kubeconfig_or_control_plane(args.kubeconfig, prefix="bench-cos-") as kubeconfig:
        asyncio.run(run(kubeconfig))


if __name__ == "__main__":
    main()
