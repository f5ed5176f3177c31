"""The inputs of the scale model (`docs/dev/scale.md`), measured on this machine: `make bench-scale`.

For each drift-watch mode (per ServiceAccount, the default; shared, opt-in) it starts a control
plane with kwok nodes, a registry, catalogd and operator-controller as real processes, then installs
synthetic extensions (`install/synthetic.py`: a CRD, a Deployment, a ServiceAccount and RBAC each,
each installed by a cluster-admin ServiceAccount of its own, so every kind may be watched) in steps
up to each size of `--sizes`, and at each size measures:

- install throughput: extensions of the step per second, created at once to all Installed;
- operator-controller's resident memory once the step's installs are done, and again after the
  restart below (no install's transients), with the latter's slope per extension between sizes;
- its established TCP connections to the API server, after that restart;
- its API requests per minute at steady state;
- drift repair: a managed ServiceAccount of `--drift-samples` extensions deleted, seconds until a
  new one exists (median and worst);
- restart: SIGTERM, start, seconds until both controllers have reconciled every extension and
  revision and their queues are empty, and the CPU seconds that took operator-controller, the
  API server, etcd and catalogd (on two cores, a restart whose CPU sums to more than its seconds
  had both busy);
- the same restart from an empty cache directory, as a new Pod starts (its cache is an emptyDir),
  and how many bundles that restart unpacked (pulled from the registry) again;
- its watches: the API server's open watches with it running minus without it (stopped for the
  restart), so the control plane's own watches, which grow with the CRDs, cancel out.

With `--profile-restarts DIR` it also takes a CPU profile of the API server for the first
`--profile-seconds` of each restart (Go's pprof, which kube-apiserver serves to its admin), writes
it to `DIR/apiserver-restart-<mode>-<size>.pprof` and prints its top functions (`go tool pprof`).

It ends with one table and the model's figures at 2,000 extensions extrapolated from the largest
size. Upstream's row comes from `make bench-upstream` (its peer needs a fetched module).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp

from hack.bench.cluster import PODS_PER_NODE, installer_namespace, plane_and_registry, pusher
from hack.bench.install import synthetic
from hack.bench.install.watches import watches_by_resource
from hack.bench.measure import (
    PLAIN_METRICS,
    cpu_seconds,
    metrics_page,
    proc_memory_mib,
    scrape,
    tcp_connections,
)
from hack.bench.upstream.run import RECONCILERS, reconciled
from olm_runtime.client import Client, errors, kinds, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import crds
from olm_testkit.catalogs import cluster_catalog, serve_catalog
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

MODES = {"account": (), "shared": ("--shared-drift-watches",)}
"""Drift-watch modes by name, and the flags that select them."""
SETTLE = 15.0
STEADY = 30.0
TIMEOUT = 1800.0
FIELD_MANAGER = "bench-scale"


@dataclass
class Row:
    mode: str
    extensions: int
    install_per_second: float = 0.0
    rss_mib: float = 0.0
    restarted_rss_mib: float = 0.0
    slope_mib: float = 0.0
    connections: int = 0
    requests_per_minute: float = 0.0
    drift_median: float = 0.0
    drift_worst: float = 0.0
    restart_seconds: float = 0.0
    restart_cpu: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    """CPU seconds of the restart: operator-controller, kube-apiserver, etcd, catalogd."""
    new_pod_restart_seconds: float = 0.0
    bundles_pulled: int = 0
    watches: float = 0.0


async def steady_requests(controller: OperatorControllerProcess) -> float:
    before = await scrape(controller)
    await asyncio.sleep(STEADY)
    delta = (await scrape(controller)).minus(before)
    return sum(delta.requests.values()) * 60.0 / STEADY


async def drift_repair(kube: Client, indexes: list[int]) -> list[float]:
    """Delete the managed ServiceAccount of each sampled extension in turn; seconds until a new one."""
    seconds = []
    for i in indexes:
        package = synthetic.package_name(i)
        namespace, name = f"bench-{package}", f"{package}-controller"
        old = await kube.get(kinds.SERVICE_ACCOUNT, name, namespace=namespace)
        started = time.perf_counter()
        await kube.delete(kinds.SERVICE_ACCOUNT, name, namespace=namespace)

        async def recreated(
            namespace: str = namespace, name: str = name, uid: str = old["metadata"]["uid"]
        ) -> bool:
            try:
                current = await kube.get(kinds.SERVICE_ACCOUNT, name, namespace=namespace)
            except errors.NotFound:
                return False
            return bool(current["metadata"]["uid"] != uid)

        await eventually(recreated, what=f"{namespace}/{name} to be restored", timeout=120, interval=0.05)
        seconds.append(time.perf_counter() - started)
    return seconds


async def restart(
    controller: OperatorControllerProcess, count: int, others: Sequence[int] = ()
) -> tuple[float, tuple[float, ...]]:
    """Seconds from a fresh start until both controllers have reconciled `count` objects each and
    their queues are empty; and the CPU seconds that took the new operator-controller and each of
    `others` (process ids)."""
    before = [cpu_seconds(pid) for pid in others]
    controller.start()
    started = time.perf_counter()

    async def converged() -> bool:
        try:
            metrics = await metrics_page(controller)
        except (AssertionError, aiohttp.ClientError):  # not serving yet
            return False
        figures = [reconciled(metrics, name) for name in RECONCILERS["ours"]]
        return all(total >= count and depth == 0 for total, depth in figures)

    # Each poll is a /metrics page the process renders: polled often, it slows what is measured.
    await eventually(
        converged, what=f"a restart to reconcile {count} extensions", timeout=TIMEOUT, interval=1.0
    )
    seconds = time.perf_counter() - started
    assert controller.process is not None
    spent = [cpu_seconds(pid) - was for pid, was in zip(others, before, strict=True)]
    return seconds, (cpu_seconds(controller.process.pid), *spent)


async def apiserver_profile(kube: Client, seconds: int, path: Path) -> None:
    """A CPU profile of the API server over the next `seconds`, written to `path`, and its top
    functions printed."""
    data = await kube.transport.request(
        "GET", "/debug/pprof/profile", params={"seconds": str(seconds)}, timeout=seconds + 60
    )
    await asyncio.to_thread(path.write_bytes, data)
    top = await asyncio.to_thread(
        subprocess.run,
        ["go", "tool", "pprof", "-top", "-nodecount=40", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"--- {path}:\n{top.stdout}{top.stderr}", flush=True)


async def restart_from_empty_cache(controller: OperatorControllerProcess, count: int) -> tuple[float, int]:
    """`restart` as a new Pod does it, with nothing in the cache directory; and how many bundles it
    unpacked again (each one pulled from the registry)."""
    controller.stop(timeout=60.0)
    shutil.rmtree(controller.cache_dir, ignore_errors=True)
    seconds, _ = await restart(controller, count)
    unpacked = controller.cache_dir / "unpack"
    return seconds, sum(1 for _ in unpacked.iterdir()) if unpacked.is_dir() else 0


async def run_mode(
    mode: str,
    sizes: list[int],
    *,
    samples: int,
    plane: ControlPlane,
    registry: Registry,
    workdir: Path,
    profiles: Path | None = None,
    profile_seconds: int = 30,
) -> list[Row]:
    rows: list[Row] = []
    config = await load_config(kubeconfig=plane.kubeconfig)
    api_port = urlsplit(config.server).port or 443
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
        await crds.install_with_system_namespace(kube, field_manager=FIELD_MANAGER)
        catalogd = CatalogdProcess(plane, workdir / "catalogd")
        controller = OperatorControllerProcess(
            plane, workdir / "operator-controller", extra_args=(PLAIN_METRICS, *MODES[mode])
        )
        catalogd.start()
        try:
            await catalogd.wait_ready()
            published = await asyncio.to_thread(synthetic.publish, pusher(registry), workdir, sizes[-1])
            await serve_catalog(
                kube, cluster_catalog("synthetic", published.digest_ref, name_label=True), timeout=900
            )
            controller.start()
            await controller.wait_ready()
            await asyncio.sleep(SETTLE)
            assert controller.process is not None
            idle_rss, _ = proc_memory_mib(controller.process.pid)
            print(f"[{mode}] idle: RSS {idle_rss:.1f} MiB", flush=True)
            installed = 0
            for size in sizes:
                row = Row(mode, size)
                _, seconds = await synthetic.install(
                    kube,
                    size,
                    "synthetic",
                    installer_namespace,
                    first=installed,
                    timeout=TIMEOUT,
                    interval=0.5,
                )
                row.install_per_second = (size - installed) / seconds
                installed = size
                await asyncio.sleep(SETTLE)
                assert controller.process is not None
                pid = controller.process.pid
                row.rss_mib, _ = proc_memory_mib(pid)
                row.requests_per_minute = await steady_requests(controller)
                step = max(1, size // samples)
                drift = await drift_repair(kube, list(range(0, size, step))[:samples])
                row.drift_median, row.drift_worst = statistics.median(drift), max(drift)
                with_it = await watches_by_resource(kube)
                controller.stop(timeout=60.0)
                await asyncio.sleep(SETTLE)
                without = await watches_by_resource(kube)
                row.watches = sum(with_it.values()) - sum(without.values())
                components = plane.pids()
                assert catalogd.process is not None
                others = (components["kube-apiserver"], components["etcd"], catalogd.process.pid)
                profiling = (
                    asyncio.create_task(
                        apiserver_profile(
                            kube, profile_seconds, profiles / f"apiserver-restart-{mode}-{size}.pprof"
                        )
                    )
                    if profiles is not None
                    else None
                )
                row.restart_seconds, cpu = await restart(controller, size, others)
                if profiling is not None:
                    await profiling
                row.restart_cpu = (cpu[0], cpu[1], cpu[2], cpu[3])
                # Memory and connections once the restart has settled: no install's transients in
                # them (idle HTTP/1.1 connections close after aiohttp's 15 s keep-alive).
                await asyncio.sleep(2 * SETTLE)
                assert controller.process is not None
                pid = controller.process.pid
                row.restarted_rss_mib, _ = proc_memory_mib(pid)
                row.connections = tcp_connections(pid, api_port)
                previous = rows[-1].restarted_rss_mib if rows else idle_rss
                row.slope_mib = (row.restarted_rss_mib - previous) / (
                    size - (rows[-1].extensions if rows else 0)
                )
                row.new_pod_restart_seconds, row.bundles_pulled = await restart_from_empty_cache(
                    controller, size
                )
                rows.append(row)
                print(f"[{mode}] {row}", flush=True)
        finally:
            controller.stop()
            catalogd.stop()
    return rows


def print_table(rows: list[Row]) -> None:
    header = (
        "mode",
        "extensions",
        "install/s",
        "RSS MiB",
        "RSS after restart",
        "MiB/ext",
        "connections",
        "watches",
        "req/min",
        "drift s (median/worst)",
        "restart s",
        "restart CPU s (ours/API server/etcd/catalogd)",
        "empty-cache restart s",
        "bundles pulled",
    )
    lines = [header]
    for r in rows:
        lines.append(
            (
                r.mode,
                str(r.extensions),
                f"{r.install_per_second:.2f}",
                f"{r.rss_mib:.0f}",
                f"{r.restarted_rss_mib:.0f}",
                f"{r.slope_mib:.3f}",
                str(r.connections),
                f"{r.watches:.0f}",
                f"{r.requests_per_minute:.0f}",
                f"{r.drift_median:.2f}/{r.drift_worst:.2f}",
                f"{r.restart_seconds:.1f}",
                "/".join(f"{c:.1f}" for c in r.restart_cpu),
                f"{r.new_pod_restart_seconds:.1f}",
                str(r.bundles_pulled),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print(" | ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    print(
        "\nextrapolated to 2,000 extensions from each mode's largest size, with the slope of memory"
        " after a restart between its last two sizes (docs/dev/scale.md's model):"
    )
    for mode in MODES:
        measured = [r for r in rows if r.mode == mode]
        if not measured:
            continue
        last = measured[-1]
        rss = last.restarted_rss_mib + (2000 - last.extensions) * last.slope_mib
        before = measured[-2] if len(measured) > 1 else Row(mode, 0)
        watches = last.watches + (2000 - last.extensions) * (last.watches - before.watches) / (
            last.extensions - before.extensions
        )
        scale = 2000 / last.extensions
        # The API server takes a fixed number of streams per HTTP/2 connection: connections follow
        # the watches, not the extensions.
        connections = math.ceil(last.connections * watches / last.watches) if last.watches else 0
        print(
            f"  {mode}: RSS {rss:.0f} MiB, watches {watches:.0f}, "
            f"connections {connections}, restart {last.restart_seconds * scale:.0f} s "
            f"(linear), drift repair {last.drift_worst:.2f} s worst"
            + ("" if len(measured) > 1 else " (one size: watches taken to grow from none at none)")
        )
    print(f"machine: {os.cpu_count()} cores shared with other work")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="200,500,1000", help="extensions installed at each step")
    parser.add_argument("--modes", default="account,shared", help="drift-watch modes: account, shared")
    parser.add_argument("--drift-samples", type=int, default=5, help="extensions whose drift is timed")
    parser.add_argument(
        "--profile-restarts", type=Path, help="directory for CPU profiles of the API server during restarts"
    )
    parser.add_argument("--profile-seconds", type=int, default=30, help="length of each such profile")
    args = parser.parse_args()
    if args.profile_restarts is not None:
        args.profile_restarts.mkdir(parents=True, exist_ok=True)
    sizes = sorted(int(n) for n in args.sizes.split(","))
    rows: list[Row] = []
    for mode in args.modes.split(","):
        workdir = Path(tempfile.mkdtemp(prefix=f"bench-scale-{mode}-"))
        # The test control plane serves no profiles unless asked to.
        profiling = ("--profiling=true",) if args.profile_restarts is not None else ()
        with plane_and_registry(workdir, pods=sizes[-1] + PODS_PER_NODE, apiserver_args=profiling) as (
            plane,
            registry,
        ):
            rows += asyncio.run(
                run_mode(
                    mode,
                    sizes,
                    samples=args.drift_samples,
                    plane=plane,
                    registry=registry,
                    workdir=workdir,
                    profiles=args.profile_restarts,
                    profile_seconds=args.profile_seconds,
                )
            )
    print_table(rows)


if __name__ == "__main__":
    main()
