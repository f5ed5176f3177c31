"""olmctl's start-up: wall and CPU time of `--help`, `search`, `list` and `status`, now and before.

Run: `uv run --frozen python -m hack.bench.olmctl [--runs 9] [--before HEAD]` (`make bench-olmctl`).

It starts a control plane of its own (one node), a registry and catalogd as a process, publishes a
small catalog (a handful of packages, a few bundles each) as a ClusterCatalog and creates one
ClusterExtension (nobody reconciles it: `status` and `list` read it as it is). Then it runs each
command `--runs` times as people run it, a fresh `python -m olm.cli.main` each time, and prints the
median wall time and the median CPU time (user + system) of each.

With `--before REF` (default `HEAD`) the same commands also run against the olmctl of that commit,
checked out into a temporary `git worktree` (removed at the end) and run with the same interpreter
and packages. Runs of the two alternate, so load on the machine weighs on both alike; each
command's output is compared between the two, since the start-up may change but what olmctl
prints must not. `--before none` measures the working tree alone.

Figures, not a test: the machine's load moves them (compare the CPU column when it is busy).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hack.bench import cluster
from olm_runtime.client import Client, load_config
from olm_runtime.testing.registry import Registry
from olm_testkit import catalogs, crds
from olm_testkit.extensions import extension_object
from olm_testkit.images.layout import catalog_image
from olm_testkit.images.registry import Reference
from olm_testkit.processes import CatalogdProcess

ROOT = Path(__file__).resolve().parents[2]
CATALOG = "bench-olmctl"
EXTENSION = "bench-green"
PACKAGES = ("green", "blue", "amber", "violet", "teal")
VERSIONS = ("0.1.0", "0.2.0", "0.3.0")


def write_catalog(directory: Path) -> None:
    """A few packages with CSV metadata (what `search` reads), one channel each."""
    directory.mkdir(parents=True)
    for package in PACKAGES:
        metadata = {
            "type": "olm.csv.metadata",
            "value": {
                "displayName": f"{package.title()} Operator",
                "description": f"Keeps {package} workloads {package}.",
                "keywords": [package, "bench"],
                "installModes": [{"type": "AllNamespaces", "supported": True}],
            },
        }
        documents: list[dict[str, Any]] = [
            {"schema": "olm.package", "name": package, "defaultChannel": "stable"}
        ]
        entries: list[dict[str, Any]] = []
        for version in VERSIONS:
            bundle = f"{package}.v{version}"
            documents.append(
                {
                    "schema": "olm.bundle",
                    "name": bundle,
                    "package": package,
                    "image": f"registry.example/{package}-bundle:v{version}",
                    "properties": [
                        {"type": "olm.package", "value": {"packageName": package, "version": version}},
                        metadata,
                    ],
                }
            )
            entries.append({"name": bundle, **({"replaces": entries[-1]["name"]} if entries else {})})
        documents.append({"schema": "olm.channel", "name": "stable", "package": package, "entries": entries})
        (directory / f"{package}.json").write_text("\n".join(json.dumps(d) for d in documents) + "\n")


@dataclass
class Figures:
    """One command of one olmctl: wall and CPU seconds of each run, and what it printed."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    outputs: set[str] = field(default_factory=set)

    def median(self) -> tuple[float, float]:
        return statistics.median(self.wall), statistics.median(self.cpu)


def run_once(tree: Path, argv: Sequence[str], figures: Figures) -> None:
    """`python -m olm.cli.main argv` with `tree`'s olm and olm_runtime first on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "olm.cli.main", *argv], cwd=tree, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise RuntimeError(
            f"olmctl {' '.join(argv)} in {tree} exited {completed.returncode}:\n{completed.stderr}"
        )
    figures.wall.append(wall)
    figures.cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    figures.outputs.add(completed.stdout)


@contextlib.contextmanager
def worktree(ref: str | None) -> Iterator[Path | None]:
    """`ref` checked out in a temporary git worktree for the block (None: no comparison)."""
    if ref is None:
        yield None
        return
    path = Path(tempfile.mkdtemp(prefix="olmctl-before-"))
    path.rmdir()
    subprocess.run(["git", "worktree", "add", "--detach", str(path), ref], cwd=ROOT, check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)
        shutil.rmtree(path, ignore_errors=True)


async def publish(kube: Client, registry: Registry, work: Path) -> None:
    """The catalog as a ClusterCatalog served by catalogd, and a ClusterExtension to report on."""
    write_catalog(work / "catalog")
    ref = f"{registry.host}/bench/olmctl:v1"
    await asyncio.to_thread(
        cluster.pusher(registry).push, catalog_image(work / "catalog"), Reference.parse(ref)
    )
    await catalogs.serve_catalog(kube, catalogs.cluster_catalog(CATALOG, ref))
    await kube.apply(extension_object(EXTENSION, "green", "bench", "installer"))


def commands(kubeconfig: Path, ca_file: Path) -> dict[str, list[str]]:
    cluster = ["--kubeconfig", str(kubeconfig), "--catalogd-ca", str(ca_file)]
    return {
        "--help": ["--help"],
        "search": [*cluster, "search", "green"],
        "list": [*cluster, "list"],
        "status": [*cluster, "status", EXTENSION],
    }


def report(runs: int, now: dict[str, Figures], before: dict[str, Figures] | None, ref: str | None) -> None:
    print(f"\nolmctl, median of {runs} runs (wall s / CPU s, CPU = user + system of the process)")
    header = f"{'command':<10} {'now':>16}"
    if before is not None:
        header += f" {'before (' + str(ref) + ')':>22} {'wall x':>7}"
    print(header)
    for name, figures in now.items():
        wall, cpu = figures.median()
        line = f"{name:<10} {wall:7.2f} / {cpu:5.2f}"
        if before is not None:
            old_wall, old_cpu = before[name].median()
            line += f" {old_wall:12.2f} / {old_cpu:5.2f} {old_wall / wall:7.1f}"
            if before[name].outputs != figures.outputs:
                line += "  OUTPUT DIFFERS"
        print(line)


async def bench(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-olmctl-"))
    try:
        with cluster.plane_and_registry(work, pods=1) as (plane, registry):
            print(f"control plane up: {plane.kubeconfig}; registry up: {registry.host}", flush=True)
            config = await load_config(kubeconfig=plane.kubeconfig)
            async with await Client.connect(config, field_manager="bench-olmctl") as kube:
                await crds.install(kube, field_manager="bench-olmctl", timeout=300)
                catalogd = CatalogdProcess(plane, work / "catalogd", webhook=False, scope_selector=None)
                async with catalogd.running():
                    await publish(kube, registry, work)
                    print(
                        f"ClusterCatalog {CATALOG} serving, ClusterExtension {EXTENSION} created", flush=True
                    )
                    argv = commands(plane.kubeconfig, plane.ca_file)
                    with worktree(args.before) as old:
                        now = {name: Figures() for name in argv}
                        before = {name: Figures() for name in argv} if old is not None else None
                        for name, command in argv.items():
                            for _ in range(args.runs):
                                await asyncio.to_thread(run_once, ROOT, command, now[name])
                                if old is not None and before is not None:
                                    await asyncio.to_thread(run_once, old, command, before[name])
                            print(f"{name}: {len(now[name].wall)} runs", flush=True)
                    report(args.runs, now, before, args.before)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.olmctl", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="runs of each command (default: 9)")
    parser.add_argument(
        "--before",
        default="HEAD",
        help="the commit to compare with, checked out in a temporary git worktree; 'none' to skip",
    )
    args = parser.parse_args()
    if args.before == "none":
        args.before = None
    asyncio.run(bench(args))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
