"""The kopf peer of the runtime benchmarks: the same scenarios, written as a kopf operator would.

Modes (one JSON object per output line, like the controller-runtime peer):

- `sync`: an in-memory kopf index of every ConfigMap in the namespace (kopf's closest thing to an
  informer cache); seconds until it holds `--expect` objects, resident memory before and after;
- `events`: a raw `on.event` handler (kopf's cheapest, with no annotation writes); after `ready`,
  records the delay from each update's `bench/written-at` stamp to its handling;
- `idle`: one handler over an empty namespace; resident memory once running.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import kopf
import yaml

WRITTEN_AT = "bench/written-at"
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def emit(**values: Any) -> None:
    print(json.dumps(values), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--mode", choices=("sync", "events", "idle"), required=True)
    parser.add_argument("--expect", type=int, default=0)
    parser.add_argument("--objects", type=int, default=0, help="events mode: objects listed at start")
    args = parser.parse_args()
    os.environ["KUBECONFIG"] = args.kubeconfig
    gc.collect()
    before = rss()
    registry = kopf.OperatorRegistry()
    done = asyncio.Event()
    listed = asyncio.Event()  # events mode: the initial listing has been handled
    started = time.monotonic()
    latencies: list[float] = []
    seen: dict[str, int] = {}
    started_ns = time.time_ns()  # stamps from earlier runs are older: they are not this run's updates
    state = {"first": 0.0, "events": 0}

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        # The admin kubeconfig of the test control plane: client certificate files.
        config = yaml.safe_load(Path(args.kubeconfig).read_text())
        cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
        return kopf.ConnectionInfo(
            server=cluster["server"],
            ca_path=cluster["certificate-authority"],
            certificate_path=user["client-certificate"],
            private_key_path=user["client-key"],
        )

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.posting.enabled = False
        settings.peering.standalone = True
        settings.watching.server_timeout = 600

    if args.mode == "sync":

        @kopf.index("configmaps", registry=registry)
        def by_name(name: str, **_: Any) -> dict[str, None]:
            if len(index_size) < args.expect:
                index_size.add(name)
                if len(index_size) == args.expect:
                    done.set()
            return {name: None}

        index_size: set[str] = set()
    else:

        @kopf.on.event("configmaps", registry=registry)
        def on_event(name: str, annotations: Mapping[str, str], **_: Any) -> None:
            state["events"] += 1
            if state["events"] >= args.objects:
                listed.set()
            stamp = int(annotations.get(WRITTEN_AT, "0"))
            if stamp <= max(seen.get(name, 0), started_ns):
                return
            seen[name] = stamp
            if not latencies:
                state["first"] = time.monotonic()
            latencies.append((time.time_ns() - stamp) / 1e9)
            if len(latencies) == args.expect:
                done.set()

    async def run() -> None:
        stop = asyncio.Event()
        ready = asyncio.Event()
        operator = asyncio.create_task(
            kopf.operator(
                registry=registry,
                namespaces=[args.namespace],
                standalone=True,
                stop_flag=stop,
                ready_flag=ready,
            )
        )
        await ready.wait()
        if args.mode == "sync":
            await done.wait()
            elapsed = time.monotonic() - started
            gc.collect()
            emit(sync_seconds=elapsed, objects=args.expect, rss_before=before, rss_after=rss())
        elif args.mode == "events":
            await listed.wait()
            emit(ready=True)
            await done.wait()
            elapsed = time.monotonic() - state["first"]
            latencies.sort()
            emit(
                events=len(latencies),
                reconciles=state["events"],
                seconds=elapsed,
                per_second=len(latencies) / elapsed,
                p50=latencies[len(latencies) // 2],
                p99=latencies[int(0.99 * (len(latencies) - 1))],
                rss=rss(),
            )
        else:
            await asyncio.sleep(2)  # let start-up allocations settle, as the Go peer does
            gc.collect()
            emit(rss=rss())
        stop.set()
        await operator

    asyncio.run(run())


if __name__ == "__main__":
    main()
