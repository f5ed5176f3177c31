"""olm_runtime in the runtime benchmarks: the scenarios the peers run, with the same JSON output.

- `sync`: an informer cache of the namespace's ConfigMaps; seconds until synced, resident memory
  before and after, and the longest event-loop stall while syncing;
- `events`: a no-op controller (Builder.for_ ConfigMap, reading from the cache); prints
  `{"ready": true}` once the initial list is reconciled, then times each update carrying
  `bench/written-at` from that write to its reconcile;
- `idle`: a manager with one controller over an empty namespace; resident memory;
- `queue`: workqueue add/get/done cycles per second in-process.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time

from hack.bench.measure import own_rss
from hack.bench.runtime.figures import Latencies, emit
from olm_runtime import cache, controller, logging, workqueue
from olm_runtime.client import Client, kinds, load_config
from olm_runtime.manager import Manager, ManagerOptions


async def watch_loop(stall: dict[str, float]) -> None:
    while True:
        started = time.perf_counter()
        await asyncio.sleep(0.005)
        stall["max"] = max(stall["max"], time.perf_counter() - started - 0.005)


async def sync(client: Client, namespace: str) -> None:
    await client.resource_for(kinds.CONFIG_MAP)  # discovery is not part of the sync
    shared = cache.Cache(client.transport, client.mapper, cache.CacheOptions(namespaces=(namespace,)))
    gc.collect()
    before = own_rss()
    stall = {"max": 0.0}
    started = time.perf_counter()
    async with asyncio.TaskGroup() as tasks:
        monitor = tasks.create_task(watch_loop(stall))
        runner = tasks.create_task(shared.start())
        informer = await shared.get_informer(kinds.CONFIG_MAP)
        await informer.wait_for_sync()
        elapsed = time.perf_counter() - started
        monitor.cancel()
        gc.collect()
        emit(
            sync_seconds=elapsed,
            objects=len(informer),
            rss_before=before,
            rss_after=own_rss(),
            max_stall=stall["max"],
        )
        runner.cancel()


async def events(client: Client, namespace: str, expect: int, objects: int) -> None:
    options = ManagerOptions(metrics_bind_address="0", cache=cache.CacheOptions(namespaces=(namespace,)))
    manager = Manager(client, options=options)
    latencies = Latencies(expect)
    state = {"reconciles": 0}
    listed = asyncio.Event()

    async def reconcile(request: controller.Request) -> controller.Result:
        state["reconciles"] += 1
        if state["reconciles"] >= objects:
            listed.set()
        obj = await manager.reader.get(kinds.CONFIG_MAP, request.name, namespace=request.namespace)
        latencies.observe(request.name, obj["metadata"].get("annotations"))
        return controller.Result()

    await (
        controller.Builder(manager)
        .for_(kinds.CONFIG_MAP)
        .named("bench")
        .complete(controller.ReconcilerFunc(reconcile))
    )
    async with asyncio.TaskGroup() as tasks:
        running = tasks.create_task(manager.run())
        await listed.wait()
        emit(ready=True)
        await latencies.done.wait()
        emit(**latencies.summary(handled=state["reconciles"]))
        running.cancel()


async def idle(client: Client, namespace: str) -> None:
    options = ManagerOptions(metrics_bind_address="0", cache=cache.CacheOptions(namespaces=(namespace,)))
    manager = Manager(client, options=options)

    async def reconcile(request: controller.Request) -> controller.Result:
        return controller.Result()

    await (
        controller.Builder(manager)
        .for_(kinds.CONFIG_MAP)
        .named("idle")
        .complete(controller.ReconcilerFunc(reconcile))
    )
    async with asyncio.TaskGroup() as tasks:
        running = tasks.create_task(manager.run())
        await manager.cache.wait_for_cache_sync()
        await asyncio.sleep(2)  # let start-up allocations settle, as the peers do
        gc.collect()
        emit(rss=own_rss())
        running.cancel()


async def queue(cycles: int) -> None:
    q: workqueue.Queue[int] = workqueue.Queue()
    started = time.perf_counter()
    for i in range(cycles):
        q.add(i)
        item = await q.get()
        q.done(item)
    elapsed = time.perf_counter() - started
    emit(cycles=cycles, seconds=elapsed, per_second=cycles / elapsed)


async def run(args: argparse.Namespace) -> None:
    if args.mode == "queue":
        await queue(args.expect)
        return
    config = await load_config(kubeconfig=args.kubeconfig)
    async with await Client.connect(config) as client:
        if args.mode == "sync":
            await sync(client, args.namespace)
        elif args.mode == "events":
            await events(client, args.namespace, args.expect, args.objects)
        else:
            await idle(client, args.namespace)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig")
    parser.add_argument("--namespace", default="")
    parser.add_argument("--mode", choices=("sync", "events", "idle", "queue"), required=True)
    parser.add_argument("--expect", type=int, default=0)
    parser.add_argument("--objects", type=int, default=0)
    logging.configure(format="console", level="warning")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
