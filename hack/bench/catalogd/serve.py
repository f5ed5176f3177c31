"""catalogd end to end: seconds to Serving, peak RSS, `all` throughput, `metas` latency under load.

Run: `uv run --frozen python -m hack.bench.catalogd.serve [--bundles 5000] [--requests 5000]`.
It starts its own control plane and registry, runs catalogd as a real process and, for the largest
real catalog (`../shared/realdata/catalogs/community-operators-prod-v4.20`, when present) and a
generated one (`--bundles` bundles of about 20 KiB each: 100 MB at 5,000), prints:

- seconds from creating the ClusterCatalog to `Serving=True` (pull, unpack, parse, validate, store);
- catalogd's resident memory after serving and its peak (VmHWM) since start;
- `GET /api/v1/all` throughput (identity encoding, one client);
- p50/p99 latency of `GET /api/v1/metas?package=<random package>` with 50 concurrent clients.

Load comes from an aiohttp client in this process (no wrk is installed here); it shares the
machine's cores with catalogd, so latency figures are upper bounds.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import shutil
import ssl
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from hack.bench.cluster import plane_and_registry, pusher
from hack.bench.measure import create_to_serving, proc_memory_mib
from olm import fbc
from olm_runtime.client import Client, load_config
from olm_runtime.testing.registry import Registry
from olm_testkit import crds
from olm_testkit.catalogs import cluster_catalog, push_catalog
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.processes import CatalogdProcess

REAL = realdata.REALDATA / realdata.COMMUNITY_CATALOG
CONCURRENCY = 50
FIELD_MANAGER = "bench"
POLL = 0.05
SERVE_TIMEOUT = 600.0


def generate(directory: Path, bundles: int, packages: int = 100) -> list[str]:
    """A valid catalog of `bundles` bundles over `packages` packages, ~20 KiB per bundle."""
    directory.mkdir(parents=True)
    names_ = [f"pkg-{i:03d}" for i in range(packages)]
    per = bundles // packages
    rng = random.Random(7)
    for package in names_:
        lines = [json.dumps({"schema": "olm.package", "name": package, "defaultChannel": "stable"})]
        entries = []
        for v in range(per):
            bundle = f"{package}.v1.{v}.0"
            entries.append({"name": bundle, **({"replaces": f"{package}.v1.{v - 1}.0"} if v else {})})
            blob = base64.b64encode(rng.randbytes(15000)).decode()
            properties = [
                {"type": "olm.package", "value": {"packageName": package, "version": f"1.{v}.0"}},
                {"type": "olm.bundle.object", "value": {"data": blob}},
            ]
            lines.append(
                json.dumps(
                    {
                        "schema": "olm.bundle",
                        "name": bundle,
                        "package": package,
                        "image": f"example.com/{package}:v1.{v}.0",
                        "properties": properties,
                    }
                )
            )
        lines.append(
            json.dumps({"schema": "olm.channel", "name": "stable", "package": package, "entries": entries})
        )
        (directory / f"{package}.json").write_text("\n".join(lines) + "\n")
    return names_


def packages_of(directory: Path) -> list[str]:
    return sorted({m.name for m in fbc.iter_metas(directory) if m.schema == "olm.package" and m.name})


@dataclass(frozen=True)
class Bench:
    kube: Client
    pusher: RegistryClient
    registry: Registry
    catalogd: CatalogdProcess
    base: str
    context: ssl.SSLContext
    requests: int


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())


async def measure(bench: Bench, label: str, directory: Path, packages: list[str]) -> None:
    kube, registry, catalogd, base, requests = (
        bench.kube,
        bench.registry,
        bench.catalogd,
        bench.base,
        bench.requests,
    )
    size = await asyncio.to_thread(_size, directory)
    name = f"bench-{label}"
    ref = f"{registry.host}/bench/{label}:v1"
    await asyncio.to_thread(push_catalog, bench.pusher, directory, ref)
    seconds = await create_to_serving(kube, cluster_catalog(name, ref), timeout=SERVE_TIMEOUT, interval=POLL)
    assert catalogd.process is not None
    pid = catalogd.process.pid
    rss, _ = proc_memory_mib(pid)
    connector = aiohttp.TCPConnector(ssl=bench.context, limit=CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector, auto_decompress=False) as session:
        started = time.perf_counter()
        total = 0
        async with session.get(
            f"{base}/{name}/api/v1/all", headers={"Accept-Encoding": "identity"}
        ) as response:
            async for chunk in response.content.iter_chunked(1 << 20):
                total += len(chunk)
        throughput = total / (time.perf_counter() - started) / 1e6
        latencies: list[float] = []
        queue = [random.choice(packages) for _ in range(requests)]

        async def client() -> None:
            while queue:
                package = queue.pop()
                t0 = time.perf_counter()
                async with session.get(
                    f"{base}/{name}/api/v1/metas", params={"package": package}
                ) as response:
                    await response.read()
                    if response.status != 200:
                        raise RuntimeError(f"metas answered {response.status}")
                latencies.append(time.perf_counter() - t0)

        load_started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(CONCURRENCY)))
        load_seconds = time.perf_counter() - load_started
    rss_after, hwm_after = proc_memory_mib(pid)
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
    print(
        f"{label:>22}: {size / 1e6:7.1f} MB source, {seconds:6.2f} s to Serving, "
        f"RSS {rss:6.1f} MiB after serving / "
        f"{rss_after:6.1f} MiB after load, "
        f"peak {hwm_after:6.1f} MiB; all: {total / 1e6:.1f} MB at {throughput:6.1f} MB/s; "
        f"metas?package= x{requests} @{CONCURRENCY}: p50 {p50:6.1f} ms, p99 {p99:6.1f} ms, "
        f"{requests / load_seconds:6.0f} req/s",
        flush=True,
    )


async def run(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-catalogd-"))
    try:
        with plane_and_registry(work) as (plane, registry):
            config = await load_config(kubeconfig=plane.kubeconfig)
            async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
                await crds.install(kube, field_manager=FIELD_MANAGER)
                # As shipped (every catalog, no webhook), logging warnings only.
                catalogd = CatalogdProcess(
                    plane,
                    work / "catalogd",
                    webhook=False,
                    scope_selector=None,
                    extra_args=("--log-format=json", "--log-level=warning"),
                )
                async with catalogd.running():
                    await measure_all(kube, registry, catalogd, args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def measure_all(
    kube: Client, registry: Registry, catalogd: CatalogdProcess, args: argparse.Namespace, work: Path
) -> None:
    assert catalogd.process is not None
    context = ssl.create_default_context(cafile=str(catalogd.control_plane.ca_file))
    print(f"catalogd pid {catalogd.process.pid}; log {catalogd.log_file}", flush=True)
    bench = Bench(kube, pusher(registry), registry, catalogd, catalogd.catalogs_url, context, args.requests)
    if REAL.is_dir():
        await measure(bench, "community-operators", REAL, await asyncio.to_thread(packages_of, REAL))
    generated = work / "generated"
    packages = await asyncio.to_thread(generate, generated, args.bundles)
    await measure(bench, f"generated-{args.bundles}", generated, packages)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.catalogd.serve")
    parser.add_argument("--bundles", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=5000)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
