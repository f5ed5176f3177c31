"""Overhead of tracing on operator-controller installs: tracing off against on, in the same run.

Run: `uv run --frozen python -m hack.bench.install.tracing [--extensions 10] [--pairs 2]`
(`make bench-tracing`). On one control plane (one kwok node) and one registry, with the setup of
`hack.bench.install.run` (`hack.bench.cluster.plane_and_registry`), it publishes one synthetic
catalog (one package, CRD and Deployment each) and serves it once, starts a real OpenTelemetry
Collector (`otelcol`, the file exporter), then runs phases off, on, off, on... (`--pairs` of them).
Each phase (re)starts catalogd and operator-controller (tracing on: the collector's `OTEL_*`
variables; off: none), waits until operator-controller is quiet (its `/metrics` read over HTTPS, as
shipped), installs `--extensions` fresh extensions one after another timing
create -> `Installed=True` for each, reads operator-controller's and catalogd's CPU seconds
(`/proc/<pid>/stat`, growth over the installs) and operator-controller's RSS, deletes its
extensions, stops both processes (SIGTERM flushes queued spans) and counts the spans the collector
wrote during the phase. Only one operator-controller runs at a time: two would fight over the
same ClusterExtensions.

Times are wall-clock seconds measured by polling every 100 ms from this process, which shares the
machine with everything it started.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hack.bench.cluster import installer_namespace, plane_and_registry, pusher
from hack.bench.install import synthetic
from hack.bench.measure import cpu_seconds, create_to_serving, proc_memory_mib, quiet
from olm.api.kinds import CLUSTER_EXTENSION
from olm_runtime import conditions
from olm_runtime.client import Client, errors, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import binaries, crds
from olm_testkit.catalogs import catalog_selector, cluster_catalog, wait_serving
from olm_testkit.collector import Collector, CollectorOptions
from olm_testkit.extensions import extension_object
from olm_testkit.installer import wait_custom_resources_served
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

FIELD_MANAGER = "bench-tracing"
CATALOG = "synthetic"
POLL = 0.1
INSTALL_TIMEOUT = 300.0


def p90(values: Sequence[float]) -> float:
    return statistics.quantiles(values, n=10, method="inclusive")[8]


@dataclass
class Phase:
    traced: bool
    installs: list[float] = field(default_factory=list)
    """Seconds from create to `Installed=True`, one per extension."""
    controller_cpu: float = 0.0
    catalogd_cpu: float = 0.0
    rss: float = 0.0
    hwm: float = 0.0
    spans: int = 0
    """Spans the collector received over the whole phase: start-up, installs, deletes, shutdown."""
    install_spans: int = 0
    """Those of them that started between the first create and the quiet after the last install."""

    @property
    def label(self) -> str:
        return "on" if self.traced else "off"


async def time_install(kube: Client, index: int) -> float:
    """Create synthetic extension `index` in a fresh namespace; seconds until `Installed=True`."""
    package = synthetic.package_name(index)
    name = f"bench-{package}"
    account = await installer_namespace(kube, name)
    started = time.perf_counter()
    await kube.create(extension_object(name, package, name, account, selector=catalog_selector(CATALOG)))

    async def installed() -> bool:
        found = dict(await kube.get(CLUSTER_EXTENSION, name))
        return conditions.of(found, "Installed").get("status") == "True"

    await eventually(installed, what=f"{name} to be Installed", timeout=INSTALL_TIMEOUT, interval=POLL)
    return time.perf_counter() - started


async def delete_all(kube: Client, indices: range) -> None:
    """Delete the phase's extensions and wait until they are gone, so every phase starts with the
    same objects in operator-controller's caches."""
    extension_names = [f"bench-{synthetic.package_name(i)}" for i in indices]
    await wait_custom_resources_served(kube)
    for name in extension_names:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(CLUSTER_EXTENSION, name)

    async def gone() -> bool:
        listed = await kube.list(CLUSTER_EXTENSION)
        return not any(item["metadata"]["name"] in extension_names for item in listed.items)

    await eventually(gone, what="the phase's extensions to be deleted", timeout=300, interval=POLL)


async def wait_stable(collector: Collector, *, still: float = 1.0, timeout: float = 30.0) -> int:
    """The collector's span count once it stopped growing for `still` seconds (its file exporter
    flushes every 100 ms, and spans flushed at SIGTERM may still be in flight)."""
    deadline = time.monotonic() + timeout
    last = len(collector.spans())
    since = time.monotonic()
    while time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        now = len(collector.spans())
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= still:
            break
    return last


async def run_phase(
    kube: Client,
    catalogd: CatalogdProcess,
    controller: OperatorControllerProcess,
    collector: Collector,
    *,
    phase: Phase,
    indices: range,
    schedule_delay_ms: int,
) -> None:
    env = collector.environment(schedule_delay_ms=schedule_delay_ms) if phase.traced else {}
    catalogd.env = env
    controller.env = env
    before = await wait_stable(collector)
    catalogd.start()
    controller.start()
    try:
        await catalogd.wait_ready()
        await controller.wait_ready()
        await wait_serving(kube, CATALOG, timeout=300)
        # Start-up work (cache sync, reconciling leftover objects) is not what is measured.
        await quiet(controller)
        assert controller.process is not None
        assert catalogd.process is not None
        controller_pid, catalogd_pid = controller.process.pid, catalogd.process.pid
        controller_cpu, catalogd_cpu = cpu_seconds(controller_pid), cpu_seconds(catalogd_pid)
        window_start = time.time_ns()
        for index in indices:
            phase.installs.append(await time_install(kube, index))
        await quiet(controller)
        window_end = time.time_ns()
        phase.controller_cpu = cpu_seconds(controller_pid) - controller_cpu
        phase.catalogd_cpu = cpu_seconds(catalogd_pid) - catalogd_cpu
        phase.rss, phase.hwm = proc_memory_mib(controller_pid)
        await delete_all(kube, indices)
        await quiet(controller)
    except Exception:
        print(f"--- operator-controller log tail ---\n{controller.log_tail(60)}", flush=True)
        raise
    finally:
        controller.stop()
        catalogd.stop()
    phase.spans = await wait_stable(collector) - before
    phase.install_spans = sum(1 for span in collector.spans() if window_start <= span.start_ns <= window_end)
    print(
        f"phase {phase.label}: installs median {statistics.median(phase.installs):.2f}s, "
        f"operator-controller CPU {phase.controller_cpu:.1f}s, RSS {phase.rss:.0f} MiB, "
        f"spans {phase.spans} ({phase.install_spans} during the installs)",
        flush=True,
    )


def table(phases: Sequence[Phase], extensions: int) -> str:
    off = [p for p in phases if not p.traced]
    on = [p for p in phases if p.traced]

    def pooled(group: Sequence[Phase]) -> list[float]:
        return [seconds for p in group for seconds in p.installs]

    def mean(group: Sequence[Phase], value: str) -> float:
        return statistics.fmean(float(getattr(p, value)) for p in group)

    rows: list[tuple[str, list[float], float, float, str]] = [
        (
            "create->Installed median (s)",
            [statistics.median(p.installs) for p in phases],
            statistics.median(pooled(off)),
            statistics.median(pooled(on)),
            "{:.2f}",
        ),
        (
            "create->Installed p90 (s)",
            [p90(p.installs) for p in phases],
            p90(pooled(off)),
            p90(pooled(on)),
            "{:.2f}",
        ),
        (
            f"operator-controller CPU s ({extensions} installs)",
            [p.controller_cpu for p in phases],
            mean(off, "controller_cpu"),
            mean(on, "controller_cpu"),
            "{:.1f}",
        ),
        (
            "catalogd CPU s (same window)",
            [p.catalogd_cpu for p in phases],
            mean(off, "catalogd_cpu"),
            mean(on, "catalogd_cpu"),
            "{:.2f}",
        ),
        (
            "operator-controller RSS (MiB)",
            [p.rss for p in phases],
            mean(off, "rss"),
            mean(on, "rss"),
            "{:.0f}",
        ),
        (
            "operator-controller peak RSS (MiB)",
            [p.hwm for p in phases],
            mean(off, "hwm"),
            mean(on, "hwm"),
            "{:.0f}",
        ),
        (
            "spans exported, whole phase (both processes)",
            [float(p.spans) for p in phases],
            mean(off, "spans"),
            mean(on, "spans"),
            "{:.0f}",
        ),
        (
            "spans started during the installs",
            [float(p.install_spans) for p in phases],
            mean(off, "install_spans"),
            mean(on, "install_spans"),
            "{:.0f}",
        ),
    ]
    header = ["", *(p.label for p in phases), "off (all)", "on (all)", "on/off"]
    lines = [header]
    for what, values, off_value, on_value, form in rows:
        ratio = f"{on_value / off_value:.2f}" if off_value else "-"
        lines.append(
            [what, *(form.format(v) for v in values), form.format(off_value), form.format(on_value), ratio]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for line in lines:
        out.append(
            "  ".join(
                cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(line)
            )
        )
    return "\n".join(out)


async def run(plane: ControlPlane, registry: Registry, workdir: Path, args: argparse.Namespace) -> None:
    phases = [Phase(traced=bool(i % 2)) for i in range(2 * args.pairs)]
    config = await load_config(kubeconfig=plane.kubeconfig)
    collector_options = CollectorOptions(
        binary=binaries.ensure_binaries() / "otelcol", state_dir=workdir / "otelcol"
    )
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
        await crds.install_with_system_namespace(kube, field_manager=FIELD_MANAGER)
        # One catalog holding every phase's packages, so each phase installs bundles it never
        # unpacked before (no phase profits from another's image cache).
        published = await asyncio.to_thread(
            synthetic.publish, pusher(registry), workdir, args.extensions * len(phases)
        )
        catalogd = CatalogdProcess(plane, workdir / "catalogd")
        # Secure metrics, as shipped: `quiet` reads them over HTTPS with a metrics reader's token.
        controller = OperatorControllerProcess(plane, workdir / "operator-controller")
        # Served once, by untraced processes, before any phase: catalog unpacking is not measured.
        async with catalogd.running():
            catalog = cluster_catalog(CATALOG, published.digest_ref, name_label=True)
            seconds = await create_to_serving(kube, catalog, timeout=600, interval=POLL)
        print(f"ClusterCatalog {CATALOG} ({len(published.bundles)} bundles) Serving in {seconds:.1f}s")
        with Collector(collector_options) as collector:
            for number, phase in enumerate(phases):
                start = number * args.extensions
                indices = range(start, start + args.extensions)
                await run_phase(
                    kube,
                    catalogd,
                    controller,
                    collector,
                    phase=phase,
                    indices=indices,
                    schedule_delay_ms=args.schedule_delay_ms,
                )
    print("\n" + "=" * 30 + " tracing overhead " + "=" * 30)
    print(table(phases, args.extensions))
    print(
        f"{args.extensions} synthetic extensions per phase, installed one at a time; tracing on: "
        f"OTLP/HTTP to a local otelcol, OTEL_BSP_SCHEDULE_DELAY={args.schedule_delay_ms}; "
        f"CPU and RSS columns 'all' are means of the phases, time columns pool the installs; "
        f"machine: {os.cpu_count()} cores shared with other work"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--extensions", type=int, default=10, help="extensions installed per phase")
    parser.add_argument("--pairs", type=int, default=2, help="off/on phase pairs")
    parser.add_argument(
        "--schedule-delay-ms",
        type=int,
        default=5000,
        help="OTEL_BSP_SCHEDULE_DELAY when traced (5000 is the SDK's default)",
    )
    args = parser.parse_args()
    if args.extensions < 2 or args.pairs < 1:
        parser.error("need at least 2 extensions and 1 pair (a p90 needs two values)")
    if any(key.startswith("OTEL_") for key in os.environ):
        # The processes inherit this environment: 'off' phases would not be off.
        parser.error("unset the OTEL_* variables first")
    workdir = Path(tempfile.mkdtemp(prefix="bench-tracing-"))
    with plane_and_registry(workdir) as (plane, registry):
        asyncio.run(run(plane, registry, workdir, args))


if __name__ == "__main__":
    main()
