"""What drift detection costs with many extensions: open watches, memory and requests.

Run: `uv run --frozen python -m hack.bench.install.watches [--extensions 20] [--installer admin]`.
It starts a control plane (one kwok node), a registry, catalogd and operator-controller as real
processes, installs `--extensions` synthetic extensions (`synthetic.py`: a CRD, a Deployment and
RBAC each) at once, each into its own namespace, and prints, idle and with them installed:

- operator-controller's resident memory (`VmRSS`, and the peak `VmHWM`);
- the watches it holds open: the API server's `apiserver_longrunning_requests{verb="WATCH"}`
  summed, minus the same sum without operator-controller (before it starts for the idle figure,
  once it is stopped for the other, so catalogd's and the control plane's own watches, which grow
  with the extensions' CRDs, cancel out), and that difference by resource;
- its established TCP connections to the API server;
- its API requests per minute at steady state (`rest_client_requests_total` by method), which is
  where drift found by polling shows.

`--installer admin` binds each extension's ServiceAccount to cluster-admin (it may watch every kind);
`--installer generated` gives it exactly what `olmctl rbac` prints for its bundle (no list or watch
on most kinds, so their drift is polled). Figures are from one run on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from hack.bench.cluster import PODS_PER_NODE, installer_namespace, plane_and_registry, pusher
from hack.bench.install import synthetic
from hack.bench.measure import PLAIN_METRICS, Report, metric_sums, proc_memory_mib, scrape, tcp_connections
from olm_runtime.client import Client, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit import crds
from olm_testkit.catalogs import cluster_catalog, serve_catalog
from olm_testkit.processes import REPO_ROOT, CatalogdProcess, OperatorControllerProcess

SETTLE = 20.0
"""Seconds left after the installs (and after stopping operator-controller) before measuring."""
STEADY = 60.0
"""Seconds over which steady-state requests are counted."""
ACCOUNT = "installer"
FIELD_MANAGER = "bench-watches"


async def watches_by_resource(kube: Client) -> dict[str, float]:
    """The API server's open watches, by `resource.group`."""

    def watch(labels: Mapping[str, str]) -> str | None:
        if labels.get("verb") != "WATCH":
            return None
        return f"{labels.get('resource')}.{labels.get('group') or 'core'}"

    text = (await kube.transport.request("GET", "/metrics")).decode()
    return metric_sums(text, "apiserver_longrunning_requests", watch)


async def generated_account(
    kube: Client, name: str, *, plane: ControlPlane, registry: Registry, workdir: Path
) -> str:
    """Namespace `name` with ServiceAccount `installer` given exactly `olmctl rbac`'s output."""
    await kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    await kube.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": ACCOUNT, "namespace": name}}
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "olm.cli.main",
        "--kubeconfig",
        str(plane.kubeconfig),
        "--catalogd-ca",
        str(plane.ca_file),
        "rbac",
        name.removeprefix("bench-"),
        "--namespace",
        name,
        "--service-account",
        ACCOUNT,
        "--extension-name",
        name,
        "--catalog",
        "synthetic",
        "--registry-ca",
        str(registry.ca_file),
        "--cache-dir",
        str(workdir / "olmctl-cache"),
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    if process.returncode:
        raise RuntimeError(f"olmctl rbac {name}: {err.decode()}")
    for document in yaml.safe_load_all(out.decode()):
        if document:
            await kube.apply(document, field_manager=FIELD_MANAGER, force=True)
    return ACCOUNT


async def requests_per_minute(process: OperatorControllerProcess) -> dict[str, float]:
    before = await scrape(process)
    await asyncio.sleep(STEADY)
    delta = (await scrape(process)).minus(before)
    return {method: value * 60.0 / STEADY for method, value in sorted(delta.requests.items()) if value}


def total(counts: dict[str, float]) -> float:
    return sum(counts.values())


async def run(plane: ControlPlane, registry: Registry, workdir: Path, args: argparse.Namespace) -> None:
    report = Report()
    config = await load_config(kubeconfig=plane.kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
        await crds.install_with_system_namespace(kube, field_manager=FIELD_MANAGER)
        catalogd = CatalogdProcess(plane, workdir / "catalogd")
        # Plain-HTTP metrics: the requests counted are operator-controller's own (`PLAIN_METRICS`).
        controller = OperatorControllerProcess(
            plane, workdir / "operator-controller", extra_args=(PLAIN_METRICS,)
        )
        catalogd.start()
        try:
            await catalogd.wait_ready()
            published = await asyncio.to_thread(synthetic.publish, pusher(registry), workdir, args.extensions)
            # The name label is set here: no catalogd webhook is registered on the bench's planes.
            await serve_catalog(
                kube, cluster_catalog("synthetic", published.digest_ref, name_label=True), timeout=600
            )
            await asyncio.sleep(SETTLE)
            before = await watches_by_resource(kube)
            controller.start()
            await controller.wait_ready()
            assert controller.process is not None
            pid = controller.process.pid
            await asyncio.sleep(SETTLE)
            idle_watches = await watches_by_resource(kube)
            rss, hwm = proc_memory_mib(pid)
            report.say("idle (catalog served, no extension)")
            report.figure("RSS idle", f"{rss:.0f} MiB (peak {hwm:.0f})")
            api_port = urlsplit(config.server).port or 443
            report.figure("connections to the API server idle", f"{tcp_connections(pid, api_port)}")

            make_account = (
                installer_namespace
                if args.installer == "admin"
                else functools.partial(generated_account, plane=plane, registry=registry, workdir=workdir)
            )
            _, seconds = await synthetic.install(kube, args.extensions, "synthetic", make_account)
            report.say(f"\n{args.extensions} extensions, installer RBAC: {args.installer}")
            report.figure("created -> all Installed", f"{seconds:.1f}s")
            await asyncio.sleep(SETTLE)
            rss, hwm = proc_memory_mib(pid)
            report.figure(f"RSS with {args.extensions} extensions", f"{rss:.0f} MiB (peak {hwm:.0f})")
            report.figure("connections to the API server", f"{tcp_connections(pid, api_port)}")
            loaded_watches = await watches_by_resource(kube)
            per_minute = await requests_per_minute(controller)
            report.figure(
                "requests/min at steady state",
                f"{total(per_minute):.0f} ({', '.join(f'{m} {v:.0f}' for m, v in per_minute.items())})",
            )
            controller.stop()
            await asyncio.sleep(SETTLE)
            without = await watches_by_resource(kube)
        finally:
            controller.stop()
            catalogd.stop()

    def own(counts: dict[str, float], baseline: dict[str, float]) -> dict[str, float]:
        keys = counts.keys() | baseline.keys()
        return {k: d for k in sorted(keys) if (d := counts.get(k, 0.0) - baseline.get(k, 0.0))}

    idle = own(idle_watches, before)
    report.figure("operator-controller watches idle", f"{total(idle):.0f}")
    report.figure("  by resource", ", ".join(f"{k} {v:.0f}" for k, v in idle.items()))
    loaded = own(loaded_watches, without)
    report.figure(f"operator-controller watches with {args.extensions} extensions", f"{total(loaded):.0f}")
    report.figure("  by resource", ", ".join(f"{k} {v:.0f}" for k, v in loaded.items()))
    report.print_summary()
    print(f"machine: {os.cpu_count()} cores shared with other work")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--extensions", type=int, default=20, help="synthetic extensions to install")
    parser.add_argument(
        "--installer", choices=("admin", "generated"), default="admin", help="RBAC of each ServiceAccount"
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-watches-"))
    # Each synthetic extension runs one Pod: enough kwok nodes for them and the system's.
    with plane_and_registry(workdir, pods=args.extensions + PODS_PER_NODE) as (plane, registry):
        asyncio.run(run(plane, registry, workdir, args))


if __name__ == "__main__":
    main()
