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
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from hack.controlplane import build
from hack.images.layout import catalog_image
from hack.images.registry import Reference, RegistryClient
from olm import fbc
from olm.api.kinds import CLUSTER_CATALOG
from olm_runtime.client import Client, errors, load_config
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions
from olm_runtime.testing.process import free_ports
from olm_runtime.testing.registry import Registry, RegistryOptions

ROOT = Path(__file__).resolve().parents[3]
REAL = ROOT.parent / "shared" / "realdata" / "catalogs" / "community-operators-prod-v4.20"
CONCURRENCY = 50


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


def proc_status(pid: int) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) * 1024
    return values


async def wait_serving(kube: Client, name: str, timeout: float = 600) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        obj = await kube.get(CLUSTER_CATALOG, name)
        for condition in (obj.get("status") or {}).get("conditions") or []:
            if condition["type"] == "Serving" and condition["status"] == "True":
                return time.monotonic() - started
        await asyncio.sleep(0.05)
    raise TimeoutError(f"{name} did not become Serving")


@dataclass(frozen=True)
class Bench:
    kube: Client
    pusher: RegistryClient
    registry: Registry
    catalogd: subprocess.Popen[bytes]
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
    image = await asyncio.to_thread(catalog_image, directory)
    await asyncio.to_thread(bench.pusher.push, image, Reference.parse(ref))
    await kube.create(
        {
            "apiVersion": CLUSTER_CATALOG.api_version,
            "kind": CLUSTER_CATALOG.kind,
            "metadata": {"name": name},
            "spec": {"source": {"type": "Image", "image": {"ref": ref}}},
        }
    )
    seconds = await wait_serving(kube, name)
    memory = proc_status(catalogd.pid)
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
    after = proc_status(catalogd.pid)
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
    print(
        f"{label:>22}: {size / 1e6:7.1f} MB source, {seconds:6.2f} s to Serving, "
        f"RSS {memory['VmRSS'] / 2**20:6.1f} MiB after serving / "
        f"{after['VmRSS'] / 2**20:6.1f} MiB after load, "
        f"peak {after['VmHWM'] / 2**20:6.1f} MiB; all: {total / 1e6:.1f} MB at {throughput:6.1f} MB/s; "
        f"metas?package= x{requests} @{CONCURRENCY}: p50 {p50:6.1f} ms, p99 {p99:6.1f} ms, "
        f"{requests / load_seconds:6.0f} req/s",
        flush=True,
    )


def _crds() -> list[Any]:
    return [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "manifests" / "crds").glob("*.yaml"))]


def _start_catalogd(plane: ControlPlane, work: Path) -> tuple[subprocess.Popen[bytes], int]:
    pair = plane.certificate_authority().issue("catalogd-bench", common_name="catalogd", hosts=["127.0.0.1"])
    cas = work / "cas"
    cas.mkdir()
    shutil.copy(plane.ca_file, cas / "ca.crt")
    metrics, health, port = free_ports(3)
    log = (work / "catalogd.log").open("wb")
    catalogd = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "olm.catalogd.main",
            f"--kubeconfig={plane.kubeconfig}",
            f"--metrics-bind-address=127.0.0.1:{metrics}",
            f"--health-probe-bind-address=127.0.0.1:{health}",
            f"--catalogs-server-addr=127.0.0.1:{port}",
            f"--tls-cert={pair.cert_file}",
            f"--tls-key={pair.key_file}",
            f"--storage-dir={work / 'storage'}",
            f"--pull-cas-dir={cas}",
            "--log-level=warning",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    return catalogd, port


async def run(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="bench-catalogd-"))
    plane = ControlPlane(
        ControlPlaneOptions(binary_dir=build.ensure_binaries(), state_dir=work / "cp", tie_to_parent=True)
    )
    plane.up()
    registry = Registry(
        RegistryOptions(state_dir=work / "registry", ca=plane.certificate_authority(), tie_to_parent=True)
    )
    registry.up()
    catalogd: subprocess.Popen[bytes] | None = None
    try:
        config = await load_config(kubeconfig=plane.kubeconfig)
        async with await Client.connect(config, field_manager="bench") as kube:
            for document in await asyncio.to_thread(_crds):
                await kube.apply(document, force=True)
            while True:
                try:
                    await kube.list(CLUSTER_CATALOG)
                    break
                except (errors.APIError, LookupError):
                    await asyncio.sleep(0.2)
            process, port = await asyncio.to_thread(_start_catalogd, plane, work)
            catalogd = process
            context = ssl.create_default_context(cafile=str(plane.ca_file))
            base = f"https://127.0.0.1:{port}/catalogs"
            pusher = RegistryClient(host=registry.host, ca_file=registry.ca_file)
            print(f"catalogd pid {process.pid}; log {work / 'catalogd.log'}", flush=True)
            bench = Bench(kube, pusher, registry, process, base, context, args.requests)
            if REAL.is_dir():
                await measure(bench, "community-operators", REAL, await asyncio.to_thread(packages_of, REAL))
            generated = work / "generated"
            packages = await asyncio.to_thread(generate, generated, args.bundles)
            await measure(bench, f"generated-{args.bundles}", generated, packages)
    finally:
        if catalogd is not None:
            catalogd.terminate()
            catalogd.wait(30)
        registry.down()
        plane.down()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m hack.bench.catalogd.serve")
    parser.add_argument("--bundles", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=5000)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
