"""Initial sync of N ConfigMaps (1 KiB of data each) into the informer cache, and what gc.freeze buys.

Run: `uv run --frozen python -m hack.bench.runtime.cache_sync [--objects 10000] [--kubeconfig PATH]`.
Without `--kubeconfig` it starts a control plane of its own (binaries from `hack.controlplane`).
Each scenario runs in a fresh process so memory and collector figures are its own; it prints:

- seconds from `Cache.start()` until synced, and the longest event-loop stall meanwhile;
- resident memory growth per cached object, next to the object's JSON size;
- the cyclic collector during the sync (collections and total pause by generation);
- after the sync, the pause of a full collection, with and without `gc.freeze()` (what every later
  gen-2 collection costs while the cache is alive), and the cost of the freeze itself.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import time
import uuid
from typing import Any

import orjson

from hack.bench.cluster import kubeconfig_or_control_plane
from hack.bench.measure import own_rss
from olm_runtime import cache
from olm_runtime.client import Client, kinds, load_config


class GcTimer:
    """Collections and pause time per generation, from `gc.callbacks`."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self.longest = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            pause = time.perf_counter() - self._started
            self.count[info["generation"]] += 1
            self.seconds[info["generation"]] += pause
            self.longest = max(self.longest, pause)


async def lag_monitor(result: dict[str, float]) -> None:
    while True:
        started = time.perf_counter()
        await asyncio.sleep(0.005)
        result["max_stall"] = max(result["max_stall"], time.perf_counter() - started - 0.005)


async def child(kubeconfig: str, namespace: str, mode: str) -> dict[str, Any]:
    config = await load_config(kubeconfig=kubeconfig)
    async with await Client.connect(config) as client:
        await client.resource_for(kinds.CONFIG_MAP)  # discovery is not part of the sync
        options = cache.CacheOptions(
            namespaces=(namespace,),
            gc_freeze=False,  # measured by hand below
            reflector=cache.ReflectorOptions(list_mode=cache.ListMode(mode)),
        )
        shared = cache.Cache(client.transport, client.mapper, options)
        informer = await shared.get_informer(kinds.CONFIG_MAP)
        gc.collect()
        timer = GcTimer()
        gc.callbacks.append(timer)
        lag = {"max_stall": 0.0}
        before = own_rss()
        started = time.perf_counter()
        async with asyncio.TaskGroup() as tasks:
            monitor = tasks.create_task(lag_monitor(lag))
            runner = tasks.create_task(shared.start())
            await shared.wait_for_cache_sync()
            synced = time.perf_counter() - started
            monitor.cancel()
            gc.callbacks.remove(timer)
            objects = len(informer)
            json_bytes = sum(len(orjson.dumps(o)) for o in informer.list()) / objects
            after = own_rss()
            t = time.perf_counter()
            gc.collect()
            full_unfrozen = time.perf_counter() - t
            t = time.perf_counter()
            gc.collect(1)
            gc.freeze()
            freeze_cost = time.perf_counter() - t
            frozen = gc.get_freeze_count()
            t = time.perf_counter()
            gc.collect()
            full_frozen = time.perf_counter() - t
            runner.cancel()
    return {
        "mode": mode,
        "objects": objects,
        "sync_seconds": synced,
        "max_loop_stall": lag["max_stall"],
        "rss_per_object": (after - before) / objects,
        "json_per_object": json_bytes,
        "gc_collections": timer.count,
        "gc_seconds": timer.seconds,
        "gc_longest_pause": timer.longest,
        "full_collection_unfrozen": full_unfrozen,
        "full_collection_frozen": full_frozen,
        "freeze_cost": freeze_cost,
        "frozen_objects": frozen,
    }


async def populate(kubeconfig: str, namespace: str, count: int) -> None:
    config = await load_config(kubeconfig=kubeconfig)
    async with await Client.connect(config) as client:
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        limit = asyncio.Semaphore(64)

        async def one(i: int) -> None:
            obj = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i:06}", "namespace": namespace, "labels": {"bench": "sync"}},
                "data": {"payload": f"{i:06}" + "x" * 1018},
            }
            async with limit:
                await client.create(obj)

        async with asyncio.TaskGroup() as tasks:
            for i in range(count):
                tasks.create_task(one(i))


def run_child(kubeconfig: str, namespace: str, mode: str) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "hack.bench.runtime.cache_sync",
            "--child",
            mode,
            "--kubeconfig",
            kubeconfig,
            "--namespace",
            namespace,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def report(results: list[dict[str, Any]]) -> None:
    for r in results:
        print(f"\n{r['mode']} list, {r['objects']} objects")
        print(f"  synced in                         {r['sync_seconds']:.2f} s")
        print(f"  longest event-loop stall          {r['max_loop_stall'] * 1000:.1f} ms")
        print(
            f"  resident memory per object        {r['rss_per_object'] / 1024:.2f} KiB "
            f"(its JSON: {r['json_per_object'] / 1024:.2f} KiB)"
        )
        print(
            f"  gc during sync (gen0/1/2)         {r['gc_collections']} collections, "
            f"{[round(s * 1000, 1) for s in r['gc_seconds']]} ms, "
            f"longest {r['gc_longest_pause'] * 1000:.1f} ms"
        )
        print(
            f"  full collection after sync        {r['full_collection_unfrozen'] * 1000:.1f} ms unfrozen, "
            f"{r['full_collection_frozen'] * 1000:.2f} ms after gc.freeze()"
        )
        print(
            f"  gc.collect(1) + gc.freeze()       {r['freeze_cost'] * 1000:.1f} ms "
            f"({r['frozen_objects']} objects frozen)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--kubeconfig")
    parser.add_argument("--namespace")
    parser.add_argument("--child", choices=[m.value for m in cache.ListMode])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args.kubeconfig, args.namespace, args.child))))
        return
    with kubeconfig_or_control_plane(args.kubeconfig, prefix="bench-cache-") as kubeconfig:
        namespace = f"bench-{uuid.uuid4().hex[:6]}"
        t = time.perf_counter()
        asyncio.run(populate(kubeconfig, namespace, args.objects))
        print(f"created {args.objects} ConfigMaps in {time.perf_counter() - t:.1f} s")
        results = [
            run_child(kubeconfig, namespace, mode.value)
            for _ in range(args.repeat)
            for mode in (cache.ListMode.STREAMING, cache.ListMode.PAGED)
        ]
        report(results)


if __name__ == "__main__":
    main()
