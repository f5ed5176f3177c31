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
import os
import time
import uuid
from pathlib import Path
from typing import Any

import yaml

from hack.bench.cluster import INSTALLER, installer_namespace, kubeconfig_or_control_plane
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller import clusterobjectset
from olm.operator_controller.clusterobjectset import identity
from olm_runtime import conditions
from olm_runtime.client import Client, load_config
from olm_runtime.client._metrics import REST_CLIENT
from olm_runtime.manager import Manager, ManagerOptions

CRD_DIR = Path(__file__).resolve().parents[3] / "manifests" / "crds"
SCENARIOS = ((1, 1), (13, 5), (20, 50))
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


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
    for path in sorted(CRD_DIR.glob("*.yaml")):
        await admin.apply(yaml.safe_load(path.read_text(encoding="utf-8")), force=True)
    await installer_namespace(admin, namespace)
    for _ in range(100):
        with contextlib.suppress(Exception):
            await admin.list(CLUSTER_OBJECT_SET)
            return
        await asyncio.sleep(0.1)


async def wait_succeeded(observer: Client, name: str) -> int:
    """Poll until the revision has Succeeded; returns how many GETs that took."""
    polls = 0
    while True:
        polls += 1
        with contextlib.suppress(Exception):
            cos = await observer.get(CLUSTER_OBJECT_SET, name)
            if conditions.is_true((cos.get("status") or {}).get("conditions") or [], "Succeeded"):
                return polls
        await asyncio.sleep(0.05)


async def run(kubeconfig: str) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    namespace = f"bench-cos-{uuid.uuid4().hex[:6]}"
    async with (
        await Client.connect(config, field_manager="bench") as admin,
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
