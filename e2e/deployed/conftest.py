"""The deployed suite: OLM as users run it. `make release` builds this checkout's artifacts, the
image archive is copied into the registry, two real kubelet nodes join the control plane,
cert-manager runs, and the release's install.yaml is applied as users apply it. catalogd (2
replicas, spread over the two nodes, label webhook registered) and operator-controller then run as
Pods on the real nodes; extension workloads land on the kwok nodes, except in namespaces placed on
the real nodes (`placement_annotations`), where they really run.

This suite needs root (the real nodes) and a session of its own: the other e2e suites run catalogd
and operator-controller as processes against their own control plane, and two operator-controllers
must never reconcile the same extensions (`make test` runs this session beside the second one).

Figures (Pod start to Ready, container memory, leader fail-over) are printed at the end of the
session; they are measurements, never assertions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.deployed import upgrade, workloads
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_OBJECT_SET
from olm.catalogd import main as catalogd_main
from olm.operator_controller import main as operator_controller_main
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import metricsreader, nodenet
from olm_testkit.catalogs import cluster_catalog, serve_catalog
from olm_testkit.certmanager import CertManager
from olm_testkit.deploy import install as deploy
from olm_testkit.extensions import Extensions
from olm_testkit.image import build as image_build
from olm_testkit.image import oci
from olm_testkit.images import busybox, realdata
from olm_testkit.images.registry import Reference, RegistryClient
from olm_testkit.installer import create_cluster_admin_account
from olm_testkit.names import unique
from olm_testkit.node import RealNode, faults, networks, placement_annotations
from olm_testkit.nodenet import NodeNetwork
from olm_testkit.release import artifacts
from olm_testkit.toxiproxy import Toxiproxy

SYSTEM_NAMESPACE = deploy.NAMESPACE
CATALOGD = "catalogd-controller-manager"
OPERATOR_CONTROLLER = "operator-controller-controller-manager"
IMAGE_REPOSITORY = "olm-py/olm"
DEMO_PACKAGES = ("kube-green", "cat-facts-operator")


# --- figures -----------------------------------------------------------------------------------


@dataclass
class Figures:
    """Measurements printed at the end of the session."""

    lines: list[str] = field(default_factory=list)

    def add(self, label: str, value: str) -> None:
        self.lines.append(f"{label:<58} {value}")


_FIGURES = Figures()


@pytest.fixture(scope="session")
def figures() -> Figures:
    return _FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _FIGURES.lines:
        terminalreporter.section("deployed OLM: figures (measurements, not assertions)")
        for line in _FIGURES.lines:
            terminalreporter.write_line(line)


def mib(value: int) -> str:
    return f"{value / 2**20:.0f} MiB"


# --- the cluster with a real node --------------------------------------------------------------


REAL_NODES = 2
"""Two, so catalogd's replicas run on different nodes as the shipped manifests spread them."""


@pytest.fixture(scope="session")
def node_networks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[NodeNetwork]]:
    """The real nodes' networks, made before the control plane so the API server listens on the
    first."""
    try:
        nodenet.check_prerequisites()
    except nodenet.PrerequisiteMissing as missing:
        pytest.fail(f"the deployed suite needs real nodes: {missing}")
    made = networks.prepare(tmp_path_factory.getbasetemp(), REAL_NODES)
    try:
        yield made
    finally:
        networks.release(made)


@pytest.fixture(scope="session")
def toxiproxy(test_tool_binaries: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Toxiproxy]:
    """Toxiproxy's server on this host, started on first request, for the network fault drills."""
    server = Toxiproxy(binary_dir=test_tool_binaries, workdir=tmp_path_factory.mktemp("toxiproxy"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class OLMRelease:
    """The release artifacts built here, their image copied into the session's registry."""

    release: artifacts.Release
    objects: list[dict[str, Any]]
    """install.yaml's objects."""

    @property
    def image(self) -> str:
        """`host/olm-py/olm@sha256:...`: what install.yaml runs."""
        return self.release.image


def publish_release(registry: Registry, release: artifacts.Release) -> list[dict[str, Any]]:
    """Copy the release's image archive into `registry` under its tag, as a user would load it into
    theirs (manifest unchanged, so the digest install.yaml pins is the one served); install.yaml's
    objects."""
    image = oci.read_archive(release.archive, ref_name=release.build.tag)
    reference = Reference(host=registry.host, repository=IMAGE_REPOSITORY, tag=release.build.tag)
    pushed = RegistryClient(host=registry.host, ca_file=registry.ca_file).push(image, reference)
    assert pushed == release.digest, f"the archive's image is {pushed}, install.yaml pins {release.digest}"
    return [obj for obj in yaml.safe_load_all(release.manifest.read_text()) if obj]


@pytest.fixture(scope="session")
def olm_release(registry: Registry, figures: Figures, tmp_path_factory: pytest.TempPathFactory) -> OLMRelease:
    """`make release` of this checkout, naming the session's registry, its image in that registry."""
    started = time.monotonic()
    release = artifacts.make(
        image_build.PROJECT_DIR,
        tmp_path_factory.mktemp("release"),
        image_name=f"{registry.host}/{IMAGE_REPOSITORY}",
    )
    figures.add("make release (snapshot of this checkout)", f"{time.monotonic() - started:.1f} s")
    objects = publish_release(registry, release)
    figures.add(
        "image size compressed / unpacked",
        f"{mib(release.local.compressed_size)} / {mib(release.local.unpacked_size)}",
    )
    return OLMRelease(release=release, objects=objects)


@dataclass(frozen=True)
class DeployedOLM:
    image: str
    """`host/olm-py/olm@sha256:...`, the image of the release applied."""
    nodes: list[RealNode]
    kube: Client
    control_plane: ControlPlane

    def node_of(self, pod: dict[str, Any]) -> RealNode:
        """The real node a Pod was scheduled to."""
        name = pod["spec"].get("nodeName")
        found = [node for node in self.nodes if node.name == name]
        assert found, f"Pod {pod['metadata']['name']} is on {name!r}, not on a real node"
        return found[0]

    async def pods(self, deployment: str) -> list[dict[str, Any]]:
        app = "catalogd" if deployment == CATALOGD else "operator-controller"
        listed = await self.kube.list(
            kinds.POD, namespace=SYSTEM_NAMESPACE, label_selector=f"app.kubernetes.io/name={app}"
        )
        return [p for p in listed.items if not p["metadata"].get("deletionTimestamp")]

    async def lease_holder(self, deployment: str) -> str:
        lease_name = (
            catalogd_main.LEASE_NAME if deployment == CATALOGD else operator_controller_main.LEASE_NAME
        )
        lease = await self.kube.get(kinds.LEASE, lease_name, namespace=SYSTEM_NAMESPACE)
        return str((lease.get("spec") or {}).get("holderIdentity") or "")

    async def leader_pod(self, deployment: str) -> str:
        """The name of the Pod holding the Lease: its identity is `<hostname>_<uuid>`, and a Pod's
        hostname is its name."""
        return (await self.lease_holder(deployment)).split("_")[0]

    async def running_container(self, pod_name: str) -> dict[str, Any]:
        """The manager container's status once the kubelet reports it running: a container that
        has just started (a new Pod, a restart) runs before the kubelet's next status write names
        it, so a status read at once may have no `containerID` yet."""
        latest: dict[str, Any] = {}

        async def running() -> bool:
            pod = await self.kube.get(kinds.POD, pod_name, namespace=SYSTEM_NAMESPACE)
            # The last read alone: a merge of reads could pair one read's id with another's state.
            latest.clear()
            latest.update(((pod.get("status") or {}).get("containerStatuses") or [{}])[0])
            return bool(latest.get("containerID")) and "running" in (latest.get("state") or {})

        await eventually(running, what=f"Pod {pod_name}'s container to be reported running", timeout=120)
        return latest

    async def container_id(self, pod_name: str) -> str:
        status = await self.running_container(pod_name)
        return str(status["containerID"]).removeprefix("containerd://")

    async def connections(self, pod: dict[str, Any], *, peers: list[str]) -> int:
        """TCP connections the Pod holds established to `peers`, from its own socket table."""
        pids = self.node_of(pod).container_pids(await self.container_id(pod["metadata"]["name"]))
        return faults.connections_of(pids[0], peers=peers)

    async def memory(self) -> dict[str, int]:
        """Resident memory of every OLM container, by Pod name."""
        found = {}
        for deployment in deploy.DEPLOYMENTS:
            for pod in await self.pods(deployment):
                found[pod["metadata"]["name"]] = self.node_of(pod).container_memory(
                    await self.container_id(pod["metadata"]["name"])
                )
        return found

    async def log(self, pod_name: str, *, tail: int | None = 200) -> str:
        """The manager container's log: its last `tail` lines, or all of it."""
        path = f"/api/v1/namespaces/{SYSTEM_NAMESPACE}/pods/{pod_name}/log?container=manager"
        if tail is not None:
            path += f"&tailLines={tail}"
        status, body = self.control_plane.rest.raw("GET", path)
        assert status == 200, body[:500]
        return body.decode()


def start_to_ready_seconds(pod: dict[str, Any]) -> float | None:
    """Seconds from the Pod's start (scheduled on the node) to its Ready condition."""
    started = (pod.get("status") or {}).get("startTime")
    ready = conditions.of(pod, "Ready")
    if not started or ready.get("status") != "True":
        return None
    return (_timestamp(ready["lastTransitionTime"]) - _timestamp(started)).total_seconds()


def _timestamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass(frozen=True)
class UpgradeRecord:
    """The session's start: the previous release deployed, extensions installed with it, this
    checkout's release applied over it, the previous one again (rollback), then this one for the
    tests (`e2e/deployed/upgrade.py`)."""

    previous: str
    """The previous release's tag."""
    before: upgrade.Snapshot
    after: upgrade.Snapshot
    """Once this release's operator-controller has reconciled everything."""
    rolled_back: upgrade.Snapshot
    """Once the previous release, applied again over this one, has reconciled everything."""
    crd_violations: dict[str, list[str]]
    """OLM's own CRDs: what the upgrade-safety rules OLM applies to extensions find between the
    previous release's (as served) and this release's, per CRD."""
    catalog_sources: tuple[str, str]
    """The upgrade catalog's resolved image before and after."""
    reconciled: upgrade.Reconciled
    installed: deploy.Deployed
    """This release applied again after the rollback: what the tests run against."""


READER_ROLE = "operator-controller-metrics-reader"
UPGRADE_EXTENSIONS = {
    # package: (version, whether it watches its own namespace only): an AllNamespaces operator with
    # webhooks and CRDs, and an OwnNamespace one.
    "kube-green": ("0.7.0", False),
    "cat-facts-operator": ("1.1.2", True),
}


@pytest.fixture(scope="session")
async def olm_upgrade(
    control_plane: ControlPlane,
    real_nodes: list[RealNode],
    *,
    cert_manager: CertManager,
    kube: Client,
    registry: Registry,
    pusher: RegistryClient,
    olm_release: OLMRelease,
    figures: Figures,
    tmp_path_factory: pytest.TempPathFactory,
) -> UpgradeRecord:
    """Upgrade OLM under installed extensions, then remove them before any test runs (kube-green's
    cluster-scoped objects would collide with the tests' own)."""
    started = time.monotonic()
    previous = await asyncio.to_thread(
        upgrade.previous_release,
        image_build.PROJECT_DIR,
        tmp_path_factory.mktemp("previous-release"),
        image_name=f"{registry.host}/{IMAGE_REPOSITORY}",
    )
    figures.add(f"upgrade: make release of the previous release ({previous.build.tag})", elapsed(started))
    cas = [control_plane.certificate_authority().cert_pem]
    placement = placement_annotations()
    previous_objects = publish_release(registry, previous)
    await deploy.install(
        kube,
        image=previous.image,
        objects=previous_objects,
        registry_cas=cas,
        namespace_annotations=placement,
    )
    published = await asyncio.to_thread(
        realdata.publish_community_catalog,
        pusher,
        pusher.host,
        packages=tuple(UPGRADE_EXTENSIONS),
        repository_prefix=unique("upgrade"),
    )
    catalog = unique("upgrade")
    await serve_catalog(kube, cluster_catalog(catalog, published.digest_ref), timeout=180)
    extensions = DemoExtensions(kube=kube, catalog=catalog)
    wanted = {unique(f"up-{package.split('-')[0]}"): package for package in UPGRADE_EXTENSIONS}
    async with upgrade.namespaces(kube, *wanted):
        for name, package in wanted.items():
            version_, own_namespace = UPGRADE_EXTENSIONS[package]
            account = await extensions.installer(name)
            config = {"watchNamespace": name} if own_namespace else None
            await extensions.create(
                name,
                package,
                name,
                account,
                version=version_,
                selector={"matchLabels": {names.METADATA_NAME_LABEL: catalog}},
                config=config,
            )
        for name, package in wanted.items():
            await extensions.wait_installed(name, UPGRADE_EXTENSIONS[package][0])
        before = await upgrade.settled_snapshot(kube, wanted, SYSTEM_NAMESPACE)
        crd_violations = await upgrade.crd_violations(kube, olm_release.objects)
        source_before = await upgrade.catalog_source(kube, catalog)
        figures.add("upgrade: previous release deployed, extensions installed", elapsed(started))

        scraper = unique("upgrade-scraper")
        async with upgrade.namespaces(kube, scraper):
            token = await metricsreader.reader_token(kube, namespace=scraper, name="reader", role=READER_ROLE)
            trust = await metricsreader.olmv1_ca(kube, SYSTEM_NAMESPACE)

            async def apply(
                image: str, objects: list[dict[str, Any]]
            ) -> tuple[deploy.Deployed, upgrade.Reconciled]:
                """Apply a release over the running one; wait until its operator-controller has
                reconciled every extension and revision."""
                applied = await deploy.install(
                    kube, image=image, objects=objects, registry_cas=cas, namespace_annotations=placement
                )
                reconciled = await upgrade.wait_reconciled(
                    kube,
                    system_namespace=SYSTEM_NAMESPACE,
                    lease=operator_controller_main.LEASE_NAME,
                    image=image,
                    trust=trust,
                    token=token,
                    extensions=len(wanted),
                    revisions=len(before.revisions),
                )
                return applied, reconciled

            upgraded_at = time.monotonic()
            _, reconciled = await apply(olm_release.image, olm_release.objects)
            after = await upgrade.snapshot(kube, wanted, SYSTEM_NAMESPACE)
            source_after = await upgrade.catalog_source(kube, catalog)
            figures.add("upgrade: this release applied to all reconciled", elapsed(upgraded_at))
            rolled_back_at = time.monotonic()
            await apply(previous.image, previous_objects)
            rolled_back = await upgrade.snapshot(kube, wanted, SYSTEM_NAMESPACE)
            figures.add("rollback: the previous release applied to all reconciled", elapsed(rolled_back_at))
            installed, _ = await apply(olm_release.image, olm_release.objects)
            await kube.delete(kinds.CLUSTER_ROLE_BINDING, f"{READER_ROLE}-{scraper}-reader")
        for name in wanted:
            await extensions.delete(name)
            await kube.delete(kinds.CLUSTER_ROLE_BINDING, f"{name}-installer")
        await kube.delete(CLUSTER_CATALOG, catalog)
    return UpgradeRecord(
        previous=previous.build.tag,
        before=before,
        after=after,
        rolled_back=rolled_back,
        crd_violations=crd_violations,
        catalog_sources=(source_before, source_after),
        reconciled=reconciled,
        installed=installed,
    )


@pytest.fixture(scope="session")
async def deployed(
    control_plane: ControlPlane,
    real_nodes: list[RealNode],
    *,
    kube: Client,
    olm_upgrade: UpgradeRecord,
    figures: Figures,
) -> AsyncIterator[DeployedOLM]:
    """OLM as this release's install.yaml deploys it over the previous release, both Deployments
    rolled out and the upgrade's extensions removed again."""
    result = olm_upgrade.installed
    olm = DeployedOLM(image=result.image, nodes=real_nodes, kube=kube, control_plane=control_plane)
    for node in real_nodes:
        figures.add(f"real node {node.name} start to Ready", f"{node.up_seconds or 0:.1f} s")
    for name, seconds in result.seconds.items():
        figures.add(f"{name}: apply to rolled out", f"{seconds:.1f} s")
    for deployment in deploy.DEPLOYMENTS:
        for pod in await olm.pods(deployment):
            ready = start_to_ready_seconds(pod)
            figures.add(f"{deployment} Pod start to Ready", f"{ready:.1f} s" if ready is not None else "?")
    for pod_name, rss in (await olm.memory()).items():
        figures.add(f"RSS idle {pod_name}", mib(rss))
    yield olm
    for pod_name, rss in (await olm.memory()).items():
        figures.add(f"RSS after the suite {pod_name}", mib(rss))


# --- workloads on the real nodes ---------------------------------------------------------------

DEADLINE_MINUTES = 10
"""The shortest `progressDeadlineMinutes` the API accepts."""


@pytest.fixture(scope="session")
def busybox_image(pusher: RegistryClient) -> str:
    """`busybox:<version>`, pushed to the session's registry as its nodes' Docker Hub mirror."""
    tag = busybox.version()
    pusher.push(busybox.image(), Reference.parse(f"{pusher.host}/{busybox.REPOSITORY}:{tag}"))
    return f"busybox:{tag}"


@dataclass(frozen=True)
class StuckRollout:
    """A revision on the real nodes whose image does not exist, with a progress deadline."""

    name: str
    namespace: str
    created: datetime
    """Its creationTimestamp: the deadline counts from it."""

    @property
    def due(self) -> datetime:
        return self.created + timedelta(minutes=DEADLINE_MINUTES)


@pytest.fixture(scope="session", autouse=True)
async def stuck_rollout(deployed: DeployedOLM, busybox_image: str) -> AsyncIterator[StuckRollout]:
    """A rollout that cannot succeed, under the shortest progress deadline the API allows, started
    with the session's first test so that its ten minutes pass while the other tests run; a test of
    `test_real_workloads` (late in the session) waits for what is left and checks the deadline
    fired. Autouse only for that early start."""
    kube = deployed.kube
    namespace = unique("stuck")
    name = unique("stuck")
    await kube.create(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "annotations": placement_annotations()},
        }
    )
    binding = f"{namespace}-installer"
    await create_cluster_admin_account(kube, namespace, workloads.INSTALLER, binding=binding)
    missing = busybox_image.rpartition(":")[0] + ":no-such-tag"
    created = await kube.create(
        workloads.revision(
            name,
            namespace,
            workloads.deployment("stuck", namespace, missing),
            progress_deadline_minutes=DEADLINE_MINUTES,
        )
    )
    try:
        yield StuckRollout(
            name=name, namespace=namespace, created=_timestamp(created["metadata"]["creationTimestamp"])
        )
    finally:
        for kind, object_name in (
            (CLUSTER_OBJECT_SET, name),
            (kinds.CLUSTER_ROLE_BINDING, binding),
            (kinds.NAMESPACE, namespace),
        ):
            with contextlib.suppress(errors.NotFound):
                await kube.delete(kind, object_name)


# --- catalogs and extensions -------------------------------------------------------------------


@dataclass(frozen=True)
class ServedCatalog:
    name: str
    published: realdata.PublishedCatalog
    catalog: dict[str, Any]


@pytest.fixture(scope="session")
async def demo_catalog(deployed: DeployedOLM, pusher: RegistryClient) -> AsyncIterator[ServedCatalog]:
    """kube-green and cat-facts-operator from the real community catalog, served by catalogd's Pods.
    Created without the name label: the webhook must add it."""
    published = await asyncio.to_thread(
        realdata.publish_community_catalog,
        pusher,
        pusher.host,
        packages=DEMO_PACKAGES,
        repository_prefix=unique("deployed"),
    )
    name = unique("demo")
    found = await serve_catalog(deployed.kube, cluster_catalog(name, published.digest_ref), timeout=180)
    try:
        yield ServedCatalog(name=name, published=published, catalog=found)
    finally:
        with contextlib.suppress(Exception):
            await deployed.kube.delete(CLUSTER_CATALOG, name)


@dataclass(kw_only=True)
class DemoExtensions(Extensions):
    """Extensions from the demo catalog (the shared helper, selecting the catalog by name)."""

    catalog: str

    async def installer(self, namespace: str) -> str:
        """A ServiceAccount in `namespace` bound to cluster-admin (brevity; scoping is tested elsewhere)."""
        name = "installer"
        await create_cluster_admin_account(self.kube, namespace, name, binding=f"{namespace}-installer")
        return name

    async def install(self, name: str, package: str, namespace: str, account: str, *, version: str) -> None:
        selector = {"matchLabels": {names.METADATA_NAME_LABEL: self.catalog}}
        await self.create(name, package, namespace, account, version=version, selector=selector)

    async def set_version(self, name: str, version: str) -> None:
        await self.patch_spec(name, {"source": {"catalog": {"version": version}}})

    async def wait_installed(self, name: str, version: str, *, timeout: float = 240) -> dict[str, Any]:
        found: dict[str, Any] = {}

        async def installed() -> bool:
            nonlocal found
            found = await self.get(name)
            bundle = ((found.get("status") or {}).get("install") or {}).get("bundle") or {}
            return (
                conditions.of(found, "Installed").get("status") == "True" and bundle.get("version") == version
            )

        try:
            await eventually(
                installed, what=f"ClusterExtension {name} to have {version} Installed", timeout=timeout
            )
        except AssertionError as error:
            raise AssertionError(
                f"{error}; last status: {json.dumps(found.get('status'), indent=1)}"
            ) from None
        return found

    async def wait_active_revisions(self, name: str, expected: list[str], *, timeout: float = 120) -> None:
        """The predecessors of a revision are archived just after it succeeds: wait for that."""
        found: list[str] = []

        async def active() -> bool:
            nonlocal found
            extension = await self.get(name)
            found = [r["name"] for r in (extension.get("status") or {}).get("activeRevisions") or []]
            return found == expected

        try:
            await eventually(active, what=f"{name}'s active revisions to be {expected}", timeout=timeout)
        except AssertionError as error:
            raise AssertionError(f"{error}; last: {found}") from None

    async def delete(self, name: str) -> None:
        """Remove the extension and wait until it is gone (its CRDs served first: see the base)."""
        await self.delete_and_wait_gone(name, timeout=180)

    async def revisions(self, name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The extension's ClusterObjectSets and its content Secrets."""
        selector = f"{names.OWNER_NAME_LABEL}={name}"
        revisions = await self.kube.list(CLUSTER_OBJECT_SET, label_selector=selector)
        secrets = await self.kube.list(kinds.SECRET, namespace=SYSTEM_NAMESPACE, label_selector=selector)
        return revisions.items, secrets.items


@pytest.fixture
async def extensions(
    deployed: DeployedOLM, demo_catalog: ServedCatalog, namespace: str
) -> AsyncIterator[DemoExtensions]:
    """Extensions from the demo catalog. Depends on `namespace` so that, when a test fails, its
    extensions are removed while their namespace and ServiceAccount still exist: a kube-green left
    behind would collide with the next test's."""
    found = DemoExtensions(kube=deployed.kube, catalog=demo_catalog.name)
    yield found
    for name in list(found.created):
        await found.delete(name)


def assert_no_orphans(revisions: list[dict[str, Any]], secrets: list[dict[str, Any]]) -> None:
    """Every Secret is referenced by exactly the revision that owns it; no revision name repeats."""
    names_ = [r["metadata"]["name"] for r in revisions]
    assert len(names_) == len(set(names_)), names_
    by_name = {r["metadata"]["name"]: r for r in revisions}
    referenced = {
        entry["ref"]["name"]: r["metadata"]["name"]
        for r in revisions
        for phase in r["spec"]["phases"]
        for entry in phase["objects"]
        if "ref" in entry
    }
    for secret in secrets:
        secret_name = secret["metadata"]["name"]
        assert secret_name in referenced, f"orphan Secret {secret_name}"
        owners = secret["metadata"].get("ownerReferences") or []
        revision = by_name[referenced[secret_name]]
        assert [(o["name"], o["uid"]) for o in owners] == [
            (revision["metadata"]["name"], revision["metadata"]["uid"])
        ], secret["metadata"]


def elapsed(started: float) -> str:
    return f"{time.monotonic() - started:.1f} s"
