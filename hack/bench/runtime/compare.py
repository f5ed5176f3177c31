"""olm_runtime against controller-runtime and kopf, same scenarios, same control plane, one run.

`make bench-runtime` (or `python -m hack.bench.runtime.compare`) starts a control plane of its own,
fills namespaces with ConfigMaps (1 KiB of data each), runs each contender in a fresh process per
scenario and prints the figures with the ratios olm_runtime / peer:

1. initial sync of 10,000 and 50,000 ConfigMaps: seconds to synced, resident memory per cached
   object, and (olm_runtime) the longest event-loop stall during the sync;
2. event throughput: a no-op reconciler while 10,000 ConfigMaps are updated: handled updates per
   second, p50/p99 delay from each update's write to its reconcile;
3. workqueue add/get/done cycles per second in-process (kopf has no work queue);
4. the idle baseline: resident memory of a manager with one controller and nothing cached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from hack.bench.peers import ensure_controller_runtime_peer
from hack.bench.runtime.figures import WRITTEN_AT
from hack.bench.shipped import shipped_python
from olm_runtime.client import Client, kinds, load_config
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions
from olm_testkit import binaries

CONTENDERS = ("olm_runtime", "controller-runtime", "kopf")
PEERLESS = CONTENDERS[:2]
SCENARIOS = ("sync", "events", "queue", "idle")
"""The contenders whose sync is not time-boxed."""


def command(contender: str, mode: str, kubeconfig: Path, namespace: str, **extra: int) -> list[str]:
    flags = [f"--{k}={v}" for k, v in extra.items()]
    if contender == "controller-runtime":
        go = [f"-{k}={v}" for k, v in extra.items()]
        return [str(ensure_controller_runtime_peer()), f"-mode={mode}", f"-kubeconfig-file={kubeconfig}",
                f"-namespace={namespace}", *go]  # fmt: skip
    module = (
        "hack.bench.runtime.contender_ours"
        if contender == "olm_runtime"
        else "hack.bench.runtime.contender_kopf"
    )
    # Ours runs with the packages olm-runtime ships with, not the development extras (structlog
    # imports rich when it is installed); kopf needs the bench group, so it keeps this interpreter.
    python = shipped_python() if contender == "olm_runtime" else sys.executable
    return [python, "-m", module, f"--mode={mode}", f"--kubeconfig={kubeconfig}",
            f"--namespace={namespace}", *flags]  # fmt: skip


KOPF_TIMEOUT = 300.0
"""Default seconds kopf gets per sync (`--kopf-timeout`): its index sync grows much faster than
linearly, and a benchmark that never ends tells nothing. A timed-out run is reported as "> N s"."""


class TimedOut(Exception):
    pass


def run_once(args: Sequence[str], timeout: float = 900) -> dict[str, Any]:
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise TimedOut(f"{args[0]} ran over {timeout:.0f}s") from None
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"{args[0]} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    values: dict[str, Any] = json.loads(lines[-1])
    return values


async def populate(client: Client, namespace: str, count: int) -> None:
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    limit = asyncio.Semaphore(48)

    async def one(i: int) -> None:
        obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"cm-{i:06}", "namespace": namespace},
            "data": {"payload": f"{i:06}" + "x" * 1018},
        }
        async with limit:
            await client.create(obj)

    await asyncio.gather(*(one(i) for i in range(count)))


async def update_all(client: Client, namespace: str, count: int) -> None:
    limit = asyncio.Semaphore(32)

    async def one(i: int) -> None:
        patch = {"metadata": {"annotations": {WRITTEN_AT: str(time.time_ns())}}}
        async with limit:
            await client.patch(kinds.CONFIG_MAP, f"cm-{i:06}", patch, namespace=namespace)

    await asyncio.gather(*(one(i) for i in range(count)))


def events_run(contender: str, kubeconfig: Path, namespace: str, count: int) -> dict[str, Any]:
    args = command(contender, "events", kubeconfig, namespace, expect=count, objects=count)
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as proc:
        assert proc.stdout is not None
        ready = _json_line(proc.stdout)
        if not ready.get("ready"):
            raise RuntimeError(f"{contender} did not become ready: {ready!r}")

        async def update() -> None:
            config = await load_config(kubeconfig=kubeconfig)
            async with await Client.connect(config) as client:
                await update_all(client, namespace, count)

        asyncio.run(update())
        values = _json_line(proc.stdout)
        proc.wait(timeout=600)
    return values


def _json_line(stream: IO[str]) -> dict[str, Any]:
    """The next JSON object a contender prints, skipping any other output."""
    for line in stream:
        if line.startswith("{"):
            values: dict[str, Any] = json.loads(line)
            return values
    raise RuntimeError("the contender exited without printing its figures")


def ratio(ours: float, peer: float) -> str:
    return f"{ours / peer:.2f}x" if peer and peer != float("inf") else "-"


def _seconds(value: float) -> str:
    return "timed out" if value == float("inf") else f"{value:.2f}s"


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    print(f"\n{title}")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.runtime.compare", description=__doc__)
    parser.add_argument("--sizes", default="10000,50000", help="object counts for the sync scenario")
    parser.add_argument("--events", type=int, default=10000, help="updates in the throughput scenario")
    parser.add_argument("--kopf-timeout", type=float, default=KOPF_TIMEOUT, help="seconds kopf gets per sync")
    parser.add_argument(
        "--scenarios",
        default=",".join(SCENARIOS),
        help="comma-separated subset of sync,events,queue,idle (e.g. `--scenarios idle` needs a quiet "
        "machine for a few seconds, not minutes)",
    )
    args = parser.parse_args()
    scenarios = set(args.scenarios.split(","))
    if not scenarios <= set(SCENARIOS):
        parser.error(f"--scenarios: choose from {', '.join(SCENARIOS)}")
    sizes = [int(s) for s in args.sizes.split(",")] if "sync" in scenarios else []
    events = args.events if "events" in scenarios else 0
    state = Path(tempfile.mkdtemp(prefix="bench-runtime-"))
    plane = ControlPlane(ControlPlaneOptions(binary_dir=binaries.ensure_binaries(), state_dir=state / "cp",
                                             nodes=1, tie_to_parent=True))  # fmt: skip
    ensure_controller_runtime_peer()
    plane.up()
    kubeconfig = plane.kubeconfig
    try:

        async def prepare() -> None:
            config = await load_config(kubeconfig=kubeconfig)
            async with await Client.connect(config) as client:
                for size in sizes:
                    await populate(client, f"sync-{size}", size)
                if events:
                    await populate(client, "events", events)
                await populate(client, "idle", 0)

        started = time.monotonic()
        asyncio.run(prepare())
        print(f"created {sum(sizes) + events} ConfigMaps in {time.monotonic() - started:.0f}s")

        rows = []
        for size in sizes:
            results = {
                c: run_once(command(c, "sync", kubeconfig, f"sync-{size}", expect=size)) for c in PEERLESS
            }
            try:
                kopf_args = command("kopf", "sync", kubeconfig, f"sync-{size}", expect=size)
                results["kopf"] = run_once(kopf_args, timeout=args.kopf_timeout)
            except TimedOut:
                results["kopf"] = {"sync_seconds": float("inf"), "rss_before": 0, "rss_after": 0}
            per_object = {c: (r["rss_after"] - r["rss_before"]) / size for c, r in results.items()}
            ours = results["olm_runtime"]
            rows.append([f"{size:,}", *(_seconds(results[c]["sync_seconds"]) for c in CONTENDERS),
                         ratio(ours["sync_seconds"], results["controller-runtime"]["sync_seconds"]),
                         ratio(ours["sync_seconds"], results["kopf"]["sync_seconds"]),
                         *(f"{per_object[c] / 1024:.2f}" if per_object[c] else "-" for c in CONTENDERS),
                         ratio(per_object["olm_runtime"], per_object["controller-runtime"]),
                         f"{ours['max_stall'] * 1000:.0f}ms"])  # fmt: skip
        if sizes:
            table("1. initial sync of ConfigMaps (1 KiB data); memory in KiB per cached object",
                  ["objects", "ours", "ctrl-rt", "kopf", "vs ctrl-rt", "vs kopf",
                   "KiB ours", "KiB ctrl-rt", "KiB kopf", "mem vs ctrl-rt", "max loop stall"],
                  rows)  # fmt: skip

        if events:
            results = {c: events_run(c, kubeconfig, "events", events) for c in CONTENDERS}
            ours = results["olm_runtime"]
            table(f"2. event throughput: no-op reconciler, {events:,} updates",
                  ["contender", "updates/s", "p50", "p99", "ours/peer updates/s"],
                  [[c, f"{r['per_second']:.0f}", f"{r['p50'] * 1000:.0f}ms", f"{r['p99'] * 1000:.0f}ms",
                    ratio(ours["per_second"], r["per_second"])] for c, r in results.items()])  # fmt: skip

        if "queue" in scenarios:
            cycles = 200_000
            queue = {c: run_once(command(c, "queue", kubeconfig, "", expect=cycles)) for c in CONTENDERS[:2]}
            table("3. workqueue add/get/done cycles per second (in-process; kopf has no work queue)",
                  ["contender", "cycles/s", "ours/peer"],
                  [[c, f"{r['per_second']:,.0f}", ratio(queue['olm_runtime']['per_second'], r["per_second"])]
                   for c, r in queue.items()])  # fmt: skip

        if "idle" in scenarios:
            idle = {c: run_once(command(c, "idle", kubeconfig, "idle")) for c in CONTENDERS}
            table("4. idle manager with one controller, nothing cached",
                  ["contender", "RSS", "ours/peer"],
                  [[c, f"{r['rss'] / 2**20:.1f} MiB", ratio(idle['olm_runtime']['rss'], r["rss"])]
                   for c, r in idle.items()])  # fmt: skip
    finally:
        plane.down()


if __name__ == "__main__":
    main()
