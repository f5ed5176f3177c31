"""What one extension costs operator-controller, by allocation site: `make bench-memory`.

`docs/dev/scale.md` models memory at 2,000 extensions from the cost of one. This bench says what
that cost is made of. It starts a control plane (kwok nodes), a registry and catalogd as
`make bench-scale` does, and operator-controller under tracemalloc (`memory_child.py`), then:

1. installs `--extensions` synthetic extensions (`install/synthetic.py`) and waits until no
   controller has reconciled for a few seconds;
2. takes a snapshot of every live allocation (SIGUSR1; garbage collected first);
3. installs as many again, waits, and takes a second snapshot.

The difference between the snapshots, divided by the number of extensions of the second step, is
what each extension keeps: printed in total (traced bytes, and resident memory for comparison:
resident memory also holds allocator slack and what tracemalloc itself keeps), then by
allocation site, largest first. Imports, caches filled once and the first connection's buffers fall
in the first step and cancel out. What the installs leave for a while is counted: an extension's
Event series, for instance, is kept for `aggregation_window` (10 minutes) after its last Event.

    uv run --frozen python -m hack.bench.memory [--extensions 100] [--top 25] [--frames 10]
        [--key lineno|traceback] [--shared-drift-watches]

Under tracemalloc the process runs two to three times slower: the figures are memory, not time.
"""

from __future__ import annotations

import argparse
import asyncio
import linecache
import signal
import sys
import tempfile
import tracemalloc
from pathlib import Path

from hack.bench.cluster import PODS_PER_NODE, installer_namespace, plane_and_registry, pusher
from hack.bench.install import synthetic
from hack.bench.measure import PLAIN_METRICS, Report, proc_memory_mib, quiet
from olm_runtime.client import Client, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import crds
from olm_testkit.catalogs import cluster_catalog, serve_catalog
from olm_testkit.processes import REPO_ROOT, CatalogdProcess, OperatorControllerProcess

FIELD_MANAGER = "bench-memory"
CHILD = Path(__file__).with_name("memory_child.py")
STILL = 5.0
"""Seconds without a reconcile before a snapshot: the installs' transients are gone."""


def _interpreter(workdir: Path, frames: int) -> Path:
    """An executable that runs its arguments (`-m module ...`) as `memory_child.py` does: the
    `python` a process class starts its component with."""
    script = workdir / "python-tracemalloc"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -X tracemalloc={frames} "{CHILD}" "$@"\n')
    script.chmod(0o755)
    return script


async def _snapshot(controller: OperatorControllerProcess, directory: Path) -> tracemalloc.Snapshot:
    assert controller.process is not None
    done = directory / "snapshots"

    def taken() -> list[str]:
        return done.read_text().splitlines() if done.exists() else []

    before = len(taken())
    controller.process.send_signal(signal.SIGUSR1)

    async def written() -> bool:
        return len(taken()) > before

    await eventually(written, what="operator-controller's tracemalloc snapshot", timeout=600, interval=0.5)
    return tracemalloc.Snapshot.load(str(directory / taken()[before]))


def _site(trace: tracemalloc.StatisticDiff, key: str) -> list[str]:
    """Where the blocks were allocated: the innermost frame (file, line, source), or with
    `--key traceback` the innermost frames tracemalloc kept, outermost first."""
    frames = list(trace.traceback)[-1:] if key == "lineno" else list(trace.traceback)[-6:]
    lines: list[str] = []
    for frame in frames:
        source = linecache.getline(frame.filename, frame.lineno).strip()
        lines.append(f"{_short(frame.filename)}:{frame.lineno}  {source}")
    return lines or ["?"]


def _short(filename: str) -> str:
    """A path from the repository, site-packages or the standard library, as people read it."""
    for marker in ("/site-packages/", f"{REPO_ROOT}/", "/lib/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


def _report(
    report: Report,
    first: tracemalloc.Snapshot,
    second: tracemalloc.Snapshot,
    *,
    count: int,
    rss: tuple[float, float],
    top: int,
    key: str,
) -> None:
    ignored = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, str(CHILD))]
    stats = second.filter_traces(ignored).compare_to(first.filter_traces(ignored), key)
    traced = sum(s.size_diff for s in stats) / 1024 / count
    report.figure("traced per extension", f"{traced:.1f} KiB")
    report.figure(
        "resident memory per extension",
        f"{(rss[1] - rss[0]) * 1024 / count:.1f} KiB ({rss[0]:.0f} -> {rss[1]:.0f} MiB)",
    )
    report.say(f"\n  the {top} largest allocation sites, per extension:")
    for stat in stats[:top]:
        site = _site(stat, key)
        size, blocks = stat.size_diff / 1024 / count, stat.count_diff / count
        report.say(f"  {size:8.2f} KiB {blocks:7.1f} blocks  {site[0]}")
        for line in site[1:]:
            report.say(f"  {'':>29}{line}")


async def run(
    plane: ControlPlane,
    registry: Registry,
    workdir: Path,
    *,
    count: int,
    frames: int,
    top: int,
    key: str,
    shared: bool,
) -> None:
    report = Report()
    snapshots = workdir / "snapshots"
    snapshots.mkdir()
    config = await load_config(kubeconfig=plane.kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
        await crds.install_with_system_namespace(kube, field_manager=FIELD_MANAGER)
        catalogd = CatalogdProcess(plane, workdir / "catalogd")
        controller = OperatorControllerProcess(
            plane,
            workdir / "operator-controller",
            extra_args=(PLAIN_METRICS, *(("--shared-drift-watches",) if shared else ())),
            python=str(_interpreter(workdir, frames)),
            env={"BENCH_MEMORY_DIR": str(snapshots)},
        )
        catalogd.start()
        try:
            await catalogd.wait_ready()
            published = await asyncio.to_thread(synthetic.publish, pusher(registry), workdir, 2 * count)
            await serve_catalog(
                kube, cluster_catalog("synthetic", published.digest_ref, name_label=True), timeout=900
            )
            controller.start()
            await controller.wait_ready(timeout=300)
            assert controller.process is not None
            mode = "shared drift watches" if shared else "drift watches per ServiceAccount"
            report.say(f"operator-controller under tracemalloc ({frames} frames), {mode}")
            rss: list[float] = []
            snaps: list[tracemalloc.Snapshot] = []
            for step in (1, 2):
                _, seconds = await synthetic.install(
                    kube,
                    step * count,
                    "synthetic",
                    installer_namespace,
                    first=(step - 1) * count,
                    timeout=3600,
                    interval=1.0,
                )
                await quiet(controller, still=STILL, timeout=900)
                rss.append(proc_memory_mib(controller.process.pid)[0])
                snaps.append(await _snapshot(controller, snapshots))
                report.say(f"  {step * count} Installed (the step in {seconds:.0f} s), RSS {rss[-1]:.0f} MiB")
            _report(report, snaps[0], snaps[1], count=count, rss=(rss[0], rss[1]), top=top, key=key)
        finally:
            controller.stop()
            catalogd.stop()
    report.print_summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--extensions", type=int, default=100, help="installed in each of the two steps")
    parser.add_argument("--top", type=int, default=25, help="allocation sites printed")
    parser.add_argument("--frames", type=int, default=10, help="frames tracemalloc keeps per allocation")
    parser.add_argument("--key", choices=("lineno", "traceback"), default="lineno", help="group sites by")
    parser.add_argument("--shared-drift-watches", action="store_true", help="the opt-in mode")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    with plane_and_registry(workdir, pods=2 * args.extensions + PODS_PER_NODE) as (plane, registry):
        asyncio.run(
            run(
                plane,
                registry,
                workdir,
                count=args.extensions,
                frames=args.frames,
                top=args.top,
                key=args.key,
                shared=args.shared_drift_watches,
            )
        )


if __name__ == "__main__":
    main()
