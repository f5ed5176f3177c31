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
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import kopf
import yaml

from hack.bench.measure import own_rss
from hack.bench.runtime.figures import Latencies, emit


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
    before = own_rss()
    registry = kopf.OperatorRegistry()
    done = asyncio.Event()
    listed = asyncio.Event()  # events mode: the initial listing has been handled
    started = time.monotonic()
    latencies = Latencies(args.expect)
    state = {"events": 0}

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
            latencies.observe(name, annotations)

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
            emit(sync_seconds=elapsed, objects=args.expect, rss_before=before, rss_after=own_rss())
        elif args.mode == "events":
            await listed.wait()
            emit(ready=True)
            await latencies.done.wait()
            emit(**latencies.summary(handled=state["events"]))
        else:
            await asyncio.sleep(2)  # let start-up allocations settle, as the Go peer does
            gc.collect()
            emit(rss=own_rss())
        stop.set()
        await operator

    asyncio.run(run())


if __name__ == "__main__":
    main()
