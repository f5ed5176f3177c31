"""Installs against their floor: what the same objects take when nothing but applying and probing
them is done.

Run: `uv run --frozen python -m hack.bench.install.floor [--rounds 3]` (part of `make bench-install`).
It starts a control plane (kwok nodes), a registry, cert-manager, catalogd and operator-controller
as real processes, publishes kube-green and sailoperator from the community catalog, and for each
package, `--rounds` times:

- **install**: a ClusterExtension created, until `Installed=True`, with a timeline of what its
  watches saw (the `Resolved` Event's own timestamp, the revision created, each of the revision's
  status changes, which name the phase being probed);
- **floor**: the very objects operator-controller applied, read back from that revision, applied
  directly by this script phase after phase in the revision's order: every object of a phase at
  once by server-side apply, then a watch on each object the built-in probes do not pass yet,
  until they do. No resolution, bundle pull, render, revision, access review or status write;
- both removed, and every object gone, before the next.

Rounds alternate which goes first, so neither always meets a cluster the other just warmed. The
ratio of the medians is the install's overhead over its floor; the timelines are its profile.
Times are this process's monotonic clock around watch events (no polling).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hack.bench.cluster import (
    INSTALLER,
    SYSTEM_PODS,
    installer_namespace,
    latest_published,
    plane_and_registry,
    pusher,
)
from hack.bench.install.run import resolved_event_at
from hack.bench.measure import Report, create_to_serving
from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.operator_controller.clusterobjectset import probes, sources
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds, load_config
from olm_runtime.client.client import object_kind
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import crds
from olm_testkit.catalogs import catalog_selector, cluster_catalog
from olm_testkit.certmanager import CertManager
from olm_testkit.extensions import Extensions, extension_object
from olm_testkit.images import realdata
from olm_testkit.installer import wait_custom_resources_served
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

FIELD_MANAGER = "bench-floor"
PACKAGES = ("kube-green", "sailoperator")
SYSTEM_NAMESPACE = names.DEFAULT_SYSTEM_NAMESPACE
SECRET_LIMIT = 64 << 20
TIMEOUT = 300.0


# --- the install through OLM ---------------------------------------------------------------------


@dataclass
class Timeline:
    """(seconds since the start, what happened), in the order it was seen."""

    started: float = field(default_factory=time.monotonic)
    marks: list[tuple[float, str]] = field(default_factory=list)

    def mark(self, what: str, at: float | None = None) -> None:
        self.marks.append(((time.monotonic() if at is None else at) - self.started, what))

    def lines(self) -> list[str]:
        return [f"{seconds:6.2f}s {what}" for seconds, what in sorted(self.marks)]


async def _watch_changes(
    kube: Client,
    gvk: Any,
    timeline: Timeline,
    *,
    label: Callable[[Mapping[str, Any]], str | None],
    field_selector: str | None = None,
    label_selector: str | None = None,
) -> None:
    """Mark every new `label` of the watched objects until cancelled."""
    seen: str | None = None
    async with kube.watch(
        gvk, field_selector=field_selector, label_selector=label_selector, allow_bookmarks=False
    ) as events:
        async for event in events:
            text = label(event.object)
            if text is not None and text != seen:
                timeline.mark(text)
                seen = text


def _revision_label(cos: Mapping[str, Any]) -> str:
    progressing = conditions.of(cos, "Progressing")
    available = conditions.of(cos, "Available")
    message = str(available.get("message") or progressing.get("message") or "")
    return (
        f"revision {cos['metadata']['name']}: Progressing {progressing.get('reason')}, "
        f"Available {available.get('reason')} {message.splitlines()[0][:110] if message else ''}"
    ).rstrip()


def _deployment_label(deployment: Mapping[str, Any]) -> str:
    """The cluster's side of a Deployment's rollout: created, then its Available condition (the
    Deployment probe passes with Available True and every replica updated)."""
    available = conditions.of(deployment, "Available").get("status")
    return f"Deployment {deployment['metadata']['name']}: Available {available or '(not yet)'}"


def _extension_label(extension: Mapping[str, Any]) -> str | None:
    progressing = conditions.of(extension, "Progressing")
    installed = conditions.of(extension, "Installed")
    if not progressing and not installed:
        return None
    return f"extension: Progressing {progressing.get('reason')}, Installed {installed.get('status')}"


@dataclass
class Install:
    seconds: float
    revision: dict[str, Any]
    timeline: Timeline


async def install(
    kube: Client, name: str, package: str, *, version: str, namespace: str, catalog: str
) -> Install:
    """Create the ClusterExtension and wait, by watching it, until it is Installed."""
    timeline = Timeline()
    wall = time.time()
    watchers = [
        asyncio.create_task(
            _watch_changes(
                kube,
                CLUSTER_OBJECT_SET,
                timeline,
                label=_revision_label,
                label_selector=f"{names.OWNER_NAME_LABEL}={name}",
            )
        ),
        asyncio.create_task(
            _watch_changes(
                kube,
                CLUSTER_EXTENSION,
                timeline,
                label=_extension_label,
                field_selector=f"metadata.name={name}",
            )
        ),
        asyncio.create_task(
            _watch_changes(
                kube,
                kinds.DEPLOYMENT,
                timeline,
                label=_deployment_label,
                label_selector=f"{names.OWNER_NAME_LABEL}={name}",
            )
        ),
    ]
    try:
        started = time.monotonic()
        timeline.started = started
        created = await kube.create(
            extension_object(
                name, package, namespace, INSTALLER, version=version, selector=catalog_selector(catalog)
            )
        )
        done = await _until(
            kube,
            created,
            lambda extension: conditions.of(extension, "Installed").get("status") == "True",
        )
        seconds = time.monotonic() - started
    finally:
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
    resolved = await resolved_event_at(kube, name)
    if resolved is not None:
        timeline.mark("Resolved Event (its eventTime)", at=started + resolved.timestamp() - wall)
    (active,) = (done.get("status") or {}).get("activeRevisions") or [{}]
    revision = dict(await kube.get(CLUSTER_OBJECT_SET, str(active["name"])))
    return Install(seconds=seconds, revision=revision, timeline=timeline)


async def _until(
    kube: Client, obj: Mapping[str, Any], done: Callable[[Mapping[str, Any]], bool]
) -> Mapping[str, Any]:
    """`obj` as it is once `done` holds, watched from the version in hand."""
    if done(obj):
        return obj
    meta = obj["metadata"]
    gvk = object_kind(obj)
    version = str(meta["resourceVersion"])
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        async with kube.watch(
            gvk,
            namespace=meta.get("namespace") if (await kube.resource_for(gvk)).namespaced else None,
            field_selector=f"metadata.name={meta['name']}",
            resource_version=version,
            timeout_seconds=60,
        ) as events:
            async for event in events:
                if event.type == "BOOKMARK":
                    version = str(event.object["metadata"]["resourceVersion"])
                    continue
                version = str(event.object["metadata"]["resourceVersion"])
                if done(event.object):
                    return event.object
    raise TimeoutError(f"{gvk.kind} {meta['name']} did not get there within {TIMEOUT:.0f}s")


# --- the floor -----------------------------------------------------------------------------------


async def revision_phases(kube: Client, revision: Mapping[str, Any]) -> list[sources.ResolvedPhase]:
    """The objects `revision` rolled out, phase by phase, as rendered (without its ownership)."""

    async def get_secret(namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return await kube.get(kinds.SECRET, name, namespace=namespace)
        except errors.NotFound:
            return None

    return await sources.resolve_phases(
        revision["spec"], get_secret, system_namespace=SYSTEM_NAMESPACE, limit=SECRET_LIMIT
    )


async def floor(kube: Client, phases: Sequence[sources.ResolvedPhase]) -> tuple[float, Timeline]:
    """Apply every phase's objects at once, wait for the built-in probes, then the next phase."""
    timeline = Timeline()
    for phase in phases:
        applied = await asyncio.gather(
            *(kube.apply(o.manifest, field_manager=FIELD_MANAGER, force=True) for o in phase.objects)
        )
        timeline.mark(f"phase {phase.name}: {len(applied)} applied")
        waiting = [obj for obj in applied if probes.check(obj, probes.BUILTIN)]
        await asyncio.gather(*(_until(kube, obj, _passes) for obj in waiting))
        if waiting:
            timeline.mark(f"phase {phase.name}: {len(waiting)} pass the probes")
    return time.monotonic() - timeline.started, timeline


def _passes(obj: Mapping[str, Any]) -> bool:
    return not probes.check(obj, probes.BUILTIN)


async def remove(kube: Client, phases: Sequence[sources.ResolvedPhase]) -> None:
    """Delete the objects, last phase first, and wait until every one is gone."""
    objects = [o.manifest for phase in reversed(phases) for o in phase.objects]
    await wait_custom_resources_served(kube)
    for manifest in objects:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(object_kind(manifest), **_locator(await _namespaced(kube, manifest), manifest))
    await gone(kube, objects)


async def _namespaced(kube: Client, manifest: Mapping[str, Any]) -> bool:
    return (await kube.resource_for(object_kind(manifest))).namespaced


def _locator(namespaced: bool, manifest: Mapping[str, Any]) -> dict[str, Any]:
    meta = manifest["metadata"]
    return {"name": meta["name"], "namespace": meta.get("namespace") if namespaced else None}


async def gone(kube: Client, objects: Sequence[Mapping[str, Any]]) -> None:
    async def all_gone() -> bool:
        for manifest in objects:
            try:
                await kube.get(object_kind(manifest), **_locator(await _namespaced(kube, manifest), manifest))
                return False
            except errors.NotFound:
                continue
        return True

    await eventually(all_gone, what="every object removed", timeout=TIMEOUT, interval=0.2)


async def uninstall(kube: Client, name: str, phases: Sequence[sources.ResolvedPhase]) -> None:
    await Extensions(kube=kube).delete_and_wait_gone(name, timeout=TIMEOUT)
    await gone(kube, [o.manifest for phase in phases for o in phase.objects])


# --- the run ------------------------------------------------------------------------------------


@dataclass
class Figures:
    installs: list[float] = field(default_factory=list)
    floors: list[float] = field(default_factory=list)
    install_timelines: list[Timeline] = field(default_factory=list)
    floor_timelines: list[Timeline] = field(default_factory=list)


async def measure(kube: Client, package: str, version: str, catalog: str, rounds: int) -> Figures:
    figures = Figures()
    namespace = f"floor-{package}"
    await installer_namespace(kube, namespace)
    phases: list[sources.ResolvedPhase] = []
    for round_ in range(rounds):
        name = f"floor-{package}-{round_}"
        floor_first = round_ % 2 == 1 and bool(phases)
        if floor_first:
            seconds, timeline = await floor(kube, phases)
            figures.floors.append(seconds)
            figures.floor_timelines.append(timeline)
            await remove(kube, phases)
        done = await install(kube, name, package, version=version, namespace=namespace, catalog=catalog)
        figures.installs.append(done.seconds)
        figures.install_timelines.append(done.timeline)
        phases = await revision_phases(kube, done.revision)
        await uninstall(kube, name, phases)
        if not floor_first:
            seconds, timeline = await floor(kube, phases)
            figures.floors.append(seconds)
            figures.floor_timelines.append(timeline)
            await remove(kube, phases)
    return figures


def _median_index(values: Sequence[float]) -> int:
    return sorted(range(len(values)), key=values.__getitem__)[len(values) // 2]


async def run(
    plane: ControlPlane,
    registry: Registry,
    workdir: Path,
    *,
    rounds: int,
    packages: Sequence[str],
    log_level: str,
) -> None:
    report = Report()
    images = pusher(registry)
    config = await load_config(kubeconfig=plane.kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
        await crds.install_with_system_namespace(kube, field_manager=FIELD_MANAGER)
        cert_manager = CertManager(plane, workdir / "cert-manager")
        report.say(f"cert-manager ready in {await cert_manager.up():.1f}s")
        catalogd = CatalogdProcess(plane, workdir / "catalogd")
        controller = OperatorControllerProcess(
            plane, workdir / "operator-controller", extra_args=(f"--log-level={log_level}",)
        )
        report.say(f"operator-controller logs at {log_level} level under {controller.workdir}")
        catalogd.start()
        controller.start()
        try:
            await catalogd.wait_ready()
            await controller.wait_ready()
            published = await asyncio.to_thread(
                realdata.publish_community_catalog,
                images,
                images.host,
                packages=tuple(packages),
                repository_prefix="bench/floor",
            )
            catalog = "floor"
            serving = await create_to_serving(
                kube,
                cluster_catalog(catalog, published.digest_ref, name_label=True),
                timeout=TIMEOUT,
                interval=0.1,
            )
            report.say(f"ClusterCatalog {catalog} Serving in {serving:.1f}s")
            for package in packages:
                version = latest_published(published, package)
                figures = await measure(kube, package, version, catalog, rounds)
                install_median = statistics.median(figures.installs)
                floor_median = statistics.median(figures.floors)
                report.say(f"\n{package} {version} ({rounds} rounds)")
                report.figure(
                    "install: create -> Installed",
                    f"median {install_median:.2f}s ({', '.join(f'{s:.2f}' for s in figures.installs)})",
                )
                report.figure(
                    "floor: same objects applied, same probes",
                    f"median {floor_median:.2f}s ({', '.join(f'{s:.2f}' for s in figures.floors)})",
                )
                report.figure("install / floor", f"{install_median / floor_median:.2f}x")
                middle = _median_index(figures.installs)
                report.say("  the median install, as its watches saw it:")
                for line in figures.install_timelines[middle].lines():
                    report.say(f"    {line}")
                middle = _median_index(figures.floors)
                report.say("  the median floor:")
                for line in figures.floor_timelines[middle].lines():
                    report.say(f"    {line}")
        finally:
            controller.stop()
            catalogd.stop()
            cert_manager.stop()
    report.print_summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="installs and floors per package")
    parser.add_argument("--packages", default=",".join(PACKAGES), help="comma-separated community packages")
    parser.add_argument(
        "--log-level", default="info", help="operator-controller's; debug times each reconcile's steps"
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    with plane_and_registry(workdir, pods=SYSTEM_PODS + 10) as (plane, registry):
        packages, level = args.packages.split(","), args.log_level
        asyncio.run(run(plane, registry, workdir, rounds=args.rounds, packages=packages, log_level=level))


if __name__ == "__main__":
    main()
