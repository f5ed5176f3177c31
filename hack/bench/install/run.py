"""operator-controller end to end: install times, resolution latency, memory, requests per reconcile.

Run: `uv run --frozen python -m hack.bench.install.run [--extensions 20] [--rounds 5]`
(`make bench-install`). It starts a control plane (one kwok node), a registry, cert-manager,
catalogd and operator-controller as real processes, publishes the whole community catalog
(`../shared/realdata/catalogs/community-operators-prod-v4.20`; bundles without a local directory
stay unpublished) and prints:

1. seconds from creating a ClusterExtension to `Progressing=Succeeded` and `Installed=True` for
   kube-green (which has a webhook, so needs cert-manager) and sailoperator, each pinned to its
   newest locally available version and installed into a fresh namespace; and to the `Resolved`
   Event (its `eventTime`, stamped by operator-controller, minus the moment of the create);
2. resolution latency in this process against the served community catalog: `get_package`
   plus `resolve`, cold (a new `CatalogClient` each run) and warm (cached), medians;
3. operator-controller's resident memory (`VmRSS`, and the peak `VmHWM`) idle with the catalogs
   served, and with `--extensions` synthetic extensions installed (one package, CRD and
   Deployment each);
4. API requests per reconcile at steady state: every extension's annotation is patched
   `--rounds` times; the growth of operator-controller's `rest_client_requests_total` (by method)
   is divided by the growth of `controller_runtime_reconcile_total{controller="clusterextension"}`.

Times are wall-clock seconds measured by polling every 100 ms from this process, which shares the
machine with everything it started. Tracing's overhead on installs: `hack.bench.install.tracing`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from hack.bench.cluster import (
    SYSTEM_PODS,
    installer_namespace,
    latest_published,
    plane_and_registry,
    pusher,
)
from hack.bench.install import synthetic
from hack.bench.measure import (
    PLAIN_METRICS,
    Report,
    create_to_serving,
    proc_memory_mib,
    quiet,
    scrape,
)
from olm.api.extensionspec import CatalogSource
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.pipeline.catalogs import CatalogClient, CatalogRef, ClientOptions
from olm.pipeline.resolve import CatalogContent, resolve
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import crds
from olm_testkit.catalogs import catalog_selector, cluster_catalog
from olm_testkit.certmanager import CertManager
from olm_testkit.extensions import extension_object
from olm_testkit.images import realdata
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

FIELD_MANAGER = "bench-install"
INSTALLS = ("kube-green", "sailoperator")
RESOLVE_PACKAGES = ("sailoperator", "infinispan", "kube-green")
POKE_ANNOTATION = "bench.olm-py.io/poke"
POLL = 0.1
INSTALL_TIMEOUT = 300.0
SLOW_INSTALL = 5.0
"""Installs slower than this print how their Progressing condition went."""
SERVE_TIMEOUT = 600.0


async def serve(kube: Client, name: str, published: realdata.PublishedCatalog) -> float:
    """Create a ClusterCatalog for `published` and wait until it serves; the seconds it took."""
    # The name label is set here: no catalogd webhook is registered on the bench's planes.
    catalog = cluster_catalog(name, published.digest_ref, name_label=True)
    return await create_to_serving(kube, catalog, timeout=SERVE_TIMEOUT, interval=POLL)


# --- 1. installs ---------------------------------------------------------------------------------


@dataclass
class InstallFigures:
    package: str
    version: str
    resolved: float | None = None
    progressing: float | None = None
    installed: float | None = None
    note: str = ""
    transitions: list[str] = field(default_factory=list)
    """Each change of the Progressing condition, as `<seconds>s <reason>: <message>`."""

    def summary(self) -> str:
        def s(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f}s"

        text = (
            f"resolved {s(self.resolved)}, progressing {s(self.progressing)}, installed {s(self.installed)}"
        )
        return text + (f" [{self.note}]" if self.note else "")


async def resolved_event_at(kube: Client, name: str) -> datetime | None:
    events = await kube.list(kinds.EVENTS_EVENT, namespace="default")
    for event in events.items:
        regarding = event.get("regarding") or {}
        if regarding.get("name") == name and event.get("reason") == "Resolved" and event.get("eventTime"):
            return datetime.fromisoformat(str(event["eventTime"]).replace("Z", "+00:00"))
    return None


async def measure_install(kube: Client, package: str, version: str, catalog: str) -> InstallFigures:
    figures = InstallFigures(package, version)
    namespace = f"bench-{package}"
    account = await installer_namespace(kube, namespace)
    name = f"bench-{package}"
    wall = time.time()
    started = time.perf_counter()
    await kube.create(
        extension_object(
            name, package, namespace, account, version=version, selector=catalog_selector(catalog)
        )
    )
    last: dict[str, Any] = {}
    while time.perf_counter() - started < INSTALL_TIMEOUT:
        last = dict(await kube.get(CLUSTER_EXTENSION, name))
        elapsed = time.perf_counter() - started
        progressing = conditions.of(last, "Progressing")
        seen = f"{progressing.get('reason')}: {str(progressing.get('message', ''))[:160]}"
        if progressing.get("reason") == "RollingOut":
            with contextlib.suppress(errors.NotFound):
                available = conditions.of(dict(await kube.get(CLUSTER_OBJECT_SET, f"{name}-1")), "Available")
                seen += f" / revision {available.get('reason')}: {str(available.get('message', ''))[:200]}"
        if not figures.transitions or not figures.transitions[-1].endswith(seen):
            figures.transitions.append(f"{elapsed:.1f}s {seen}")
        if figures.progressing is None and progressing.get("reason") == "Succeeded":
            figures.progressing = elapsed
        if figures.installed is None and conditions.of(last, "Installed").get("status") == "True":
            figures.installed = elapsed
        if figures.progressing is not None and figures.installed is not None:
            break
        await asyncio.sleep(POLL)
    else:
        progressing = conditions.of(last, "Progressing")
        figures.note = (
            f"timed out after {INSTALL_TIMEOUT:.0f}s: Progressing={progressing.get('reason')}: "
            + str(progressing.get("message", ""))[:300]
        )
    at = await resolved_event_at(kube, name)
    if at is not None:
        figures.resolved = at.timestamp() - wall
    return figures


# --- 2. resolution in process -------------------------------------------------------------------


@dataclass
class ResolveFigures:
    package: str
    bundles: int
    chosen: str
    cold: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)


async def resolve_once(client: CatalogClient, ref: CatalogRef, package: str) -> tuple[int, str]:
    content = await client.get_package(ref, package)
    source = CatalogSource(package_name=package)
    resolution = resolve(source, None, [CatalogContent(name=ref.name, priority=0, content=content)])
    return len(content.bundles), resolution.bundle.name


async def measure_resolution(kube: Client, ca_file: Path, catalog: str, runs: int) -> list[ResolveFigures]:
    ref = CatalogRef.from_cluster_catalog(dict(await kube.get(CLUSTER_CATALOG, catalog)))
    options = ClientOptions(ca_file=ca_file)
    results = []
    for package in RESOLVE_PACKAGES:
        figures: ResolveFigures | None = None
        for _ in range(runs):
            client = CatalogClient(options)
            try:
                started = time.perf_counter()
                count, chosen = await resolve_once(client, ref, package)
                elapsed = time.perf_counter() - started
            finally:
                await client.close()
            figures = figures or ResolveFigures(package, count, chosen)
            figures.cold.append(elapsed)
        assert figures is not None
        client = CatalogClient(options)
        try:
            await resolve_once(client, ref, package)
            for _ in range(runs):
                started = time.perf_counter()
                await resolve_once(client, ref, package)
                figures.warm.append(time.perf_counter() - started)
        finally:
            await client.close()
        results.append(figures)
    return results


# --- 3 and 4. many extensions -------------------------------------------------------------------


@dataclass(frozen=True)
class RequestFigures:
    rounds: int
    reconciles: dict[str, float]
    requests: dict[str, float]


async def measure_requests(
    kube: Client, process: OperatorControllerProcess, extensions: Sequence[str], rounds: int
) -> RequestFigures:
    before = await quiet(process)
    target = before.reconciles.get("clusterextension", 0.0)
    for round_ in range(rounds):
        for name in extensions:
            await kube.patch(
                CLUSTER_EXTENSION, name, {"metadata": {"annotations": {POKE_ANNOTATION: str(round_)}}}
            )
        target += len(extensions)

        async def caught_up(target: float = target) -> bool:
            return (await scrape(process)).reconciles.get("clusterextension", 0.0) >= target

        await eventually(caught_up, what=f"round {round_} of reconciles", timeout=120, interval=POLL)
    after = await quiet(process)
    delta = after.minus(before)
    return RequestFigures(rounds, delta.reconciles, delta.requests)


# --- the run ------------------------------------------------------------------------------------


def ms(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ms (min {min(values) * 1000:.1f}, n={len(values)})"


async def run(plane: ControlPlane, registry: Registry, workdir: Path, args: argparse.Namespace) -> None:
    report = Report()
    images = pusher(registry)
    config = await load_config(kubeconfig=plane.kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
        # The OLM CRDs and the system namespace, which both processes need before they start.
        await crds.install_with_system_namespace(kube, field_manager=FIELD_MANAGER)
        cert_manager = CertManager(plane, workdir / "cert-manager")
        try:
            report.say(f"cert-manager ready in {await cert_manager.up():.1f}s")
        except Exception as err:  # measured anyway: kube-green then stops where it can
            report.say(f"cert-manager NOT usable ({type(err).__name__}: {str(err)[:300]})")
        catalogd = CatalogdProcess(plane, workdir / "catalogd")
        # Plain-HTTP metrics: the figures count operator-controller's API requests, and a secure
        # listener would add its TokenReviews and SubjectAccessReviews to them.
        controller = OperatorControllerProcess(
            plane, workdir / "operator-controller", extra_args=(PLAIN_METRICS,)
        )
        catalogd.start()
        controller.start()
        try:
            await catalogd.wait_ready()
            await controller.wait_ready()
            assert controller.process is not None
            pid = controller.process.pid
            started = time.perf_counter()
            packages = sorted(
                p.name for p in (realdata.realdata() / realdata.COMMUNITY_CATALOG).iterdir() if p.is_dir()
            )
            community = await asyncio.to_thread(
                realdata.publish_community_catalog,
                images,
                images.host,
                packages=packages,
                repository_prefix="bench/community",
            )
            report.say(
                f"published the community catalog ({len(packages)} packages, "
                f"{len(community.bundles) - len(community.unpublished)} of {len(community.bundles)} bundles "
                f"pushed) in {time.perf_counter() - started:.1f}s"
            )
            seconds = await serve(kube, "community", community)
            report.say(f"ClusterCatalog community Serving in {seconds:.1f}s")
            await asyncio.sleep(2.0)
            rss, hwm = proc_memory_mib(pid)
            report.say("\n3a. operator-controller memory, idle (catalog served, no extension)")
            report.figure("RSS idle", f"{rss:.0f} MiB (peak {hwm:.0f})")

            report.say(
                "\n1. ClusterExtension create -> Resolved event / Progressing=Succeeded / Installed=True"
            )
            for package in INSTALLS:
                version = latest_published(community, package)
                figures = await measure_install(kube, package, version, "community")
                report.figure(f"install {package} {version}", figures.summary())
                if figures.installed is None or figures.installed > SLOW_INSTALL:
                    for line in figures.transitions:
                        report.say(f"      Progressing at {line}")

            report.say(f"\n2. resolution in process against the whole community catalog ({args.runs} runs)")
            for item in await measure_resolution(kube, plane.ca_file, "community", args.runs):
                report.figure(
                    f"resolve {item.package} cold ({item.bundles} bundles -> {item.chosen})", ms(item.cold)
                )
                report.figure(f"resolve {item.package} warm", ms(item.warm))

            report.say(f"\n3b. {args.extensions} synthetic extensions")
            published = await asyncio.to_thread(synthetic.publish, images, workdir, args.extensions)
            await serve(kube, "synthetic", published)
            installed, seconds = await synthetic.install(kube, args.extensions, "synthetic")
            report.figure(f"{args.extensions} extensions created -> all Installed", f"{seconds:.1f}s")
            await quiet(controller)
            rss, hwm = proc_memory_mib(pid)
            report.figure(
                f"RSS with {args.extensions + len(INSTALLS)} extensions", f"{rss:.0f} MiB (peak {hwm:.0f})"
            )

            report.say(f"\n4. API requests per reconcile at steady state ({args.rounds} annotation rounds)")
            figures_ = await measure_requests(kube, controller, installed, args.rounds)
            per = figures_.reconciles.get("clusterextension", 0.0)
            total = sum(figures_.requests.values())
            report.figure(
                "reconciles",
                ", ".join(
                    f"{name} {value:.0f}" for name, value in sorted(figures_.reconciles.items()) if value
                ),
            )
            breakdown = ", ".join(f"{m} {v:.0f}" for m, v in sorted(figures_.requests.items()) if v)
            report.figure(
                "requests per clusterextension reconcile",
                f"{total / per:.2f} ({total:.0f} requests: {breakdown or 'none'})"
                if per
                else "no reconciles",
            )
            rss, hwm = proc_memory_mib(pid)
            report.figure("RSS after the rounds", f"{rss:.0f} MiB (peak {hwm:.0f})")
        except Exception:
            traceback.print_exc()
            print(f"--- operator-controller log tail ---\n{controller.log_tail(60)}")
            raise
        finally:
            controller.stop()
            catalogd.stop()
            cert_manager.stop()

    report.print_summary()
    print(
        f"machine: {os.cpu_count()} cores shared with other work; ours only (make bench-upstream runs "
        "upstream's operator-controller beside it)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--extensions", type=int, default=20, help="synthetic extensions to install")
    parser.add_argument("--rounds", type=int, default=5, help="annotation patches per extension")
    parser.add_argument("--runs", type=int, default=7, help="runs per resolution figure")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-install-"))
    with plane_and_registry(workdir, pods=args.extensions + SYSTEM_PODS) as (plane, registry):
        asyncio.run(run(plane, registry, workdir, args))


if __name__ == "__main__":
    main()
