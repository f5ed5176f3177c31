"""`olmctl migrate` against the real OLM v0: operators installed through v0 Subscriptions move to
ClusterExtensions in place.

The cluster starts as a v0 cluster does: v0's olm and catalog operators (v0.38.0, unchanged) install
real bundles of `shared/realdata` from a catalog `opm serve` serves, in the three install modes v1
supports, one of them with Manual approval and an upgrade waiting for it. The same bundles are
pushed to the session's registry and served to OLM v1 by catalogd from a catalog image with the
same packages, channels and bundles (v0's copy leaves each bundle's `image` empty so that v0 reads
the manifests inline: see `olm_testkit.olmv0.fbc`). A catalogd and an operator-controller of this
module's own run beside v0.

Each migration is checked by what users care about: the operator's Deployment, ServiceAccount,
CRDs and Pods keep their uids and start times (nothing restarted, nothing recreated), the
revision controls them, v0's Subscription, InstallPlans, CSV and OperatorGroup are gone and v0's
marks are off. An installation v1 cannot take (the same package installed in two namespaces) is
refused with the reason, and nothing changes. A run killed half-way is finished by a second run.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from e2e.migration.conftest import V0Installs
from e2e.operator_controller.conftest import SUITE_SCOPE, ServedCatalog, serve_catalog
from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.cli.migrate.assess import MIGRATED_FROM_ANNOTATION
from olm.cli.migrate.v0 import CSV, INSTALL_PLAN, OPERATOR_GROUP, SUBSCRIPTION
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit import olmv0
from olm_testkit.extensions import Extensions
from olm_testkit.images import layout, realdata
from olm_testkit.images.registry import Reference, RegistryClient
from olm_testkit.names import unique
from olm_testkit.olmctl import REPO_ROOT, Olmctl
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

BUNDLES = {
    "argocd-operator": ("0.7.0",),
    "cat-facts-operator": ("1.1.2",),
    "etcd": ("0.9.2", "0.9.4"),
}
"""Real bundles without dependencies, conversion webhooks or admission webhooks: one package per
install mode, so the tests share no CRD."""
CHANNEL = "migration"


@dataclass(frozen=True)
class Catalogs:
    """The same packages served to v0 (a CatalogSource) and to v1 (a ClusterCatalog)."""

    source: str
    """The CatalogSource's name, in v0's namespace."""
    v1: ServedCatalog

    @property
    def mapping(self) -> str:
        return f"{olmv0.kinds.NAMESPACE}/{self.source}={self.v1.name}"


@pytest.fixture(scope="module")
async def olm_v1(
    control_plane: ControlPlane, olm_crds: None, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[OperatorControllerProcess]:
    catalogd = CatalogdProcess(control_plane, tmp_path_factory.mktemp("catalogd"), scope_selector=SUITE_SCOPE)
    operator_controller = OperatorControllerProcess(
        control_plane, tmp_path_factory.mktemp("operator-controller")
    )
    async with catalogd.running(), operator_controller.running():
        yield operator_controller


def _v1_catalog(v0_dir: Path, images: dict[str, str], into: Path) -> Path:
    """v0's catalog with each bundle's `image` set: the content a ClusterCatalog serves."""
    shutil.copytree(v0_dir, into)
    for stream in into.rglob("*.json"):
        blobs = [json.loads(line) for line in stream.read_text().splitlines() if line.strip()]
        for blob in blobs:
            if blob.get("schema") == "olm.bundle":
                blob["image"] = images[blob["name"]]
        stream.write_text("".join(json.dumps(blob) + "\n" for blob in blobs))
    return into


@pytest.fixture(scope="module")
async def catalogs(
    kube: Client,
    olm_v0: olmv0.OlmV0,
    olm_v1: OperatorControllerProcess,
    pusher: RegistryClient,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Catalogs]:
    prefix = unique("e2e-migration")
    packages = []
    by_bundle: dict[str, str] = {}
    for name, versions in BUNDLES.items():
        refs = {
            v: realdata.push_bundle(
                pusher, pusher.host, f"{prefix}/{name}-bundle", realdata.real_bundle(name, v)
            )
            for v in versions
        }
        package = olmv0.real_package(name, versions, images=refs, channel=CHANNEL, default_channel=CHANNEL)
        packages.append(package)
        for blob in olmv0.package_blobs(package):
            if blob["schema"] == "olm.bundle":
                (version,) = [p["value"]["version"] for p in blob["properties"] if p["type"] == "olm.package"]
                by_bundle[blob["name"]] = refs[version]
    v0_dir = olmv0.write_catalog(tmp_path_factory.mktemp("v0-catalog"), packages)
    olmv0.validate(olm_v0.binary_dir / "opm", v0_dir)
    v1_dir = _v1_catalog(v0_dir, by_bundle, tmp_path_factory.mktemp("v1-catalog") / "fbc")
    reference = Reference(host=pusher.host, repository=f"{prefix}/catalog", tag="v1")
    digest = pusher.push(layout.catalog_image(v1_dir), reference)
    published = realdata.PublishedCatalog(
        ref=str(reference),
        digest_ref=f"{pusher.host}/{reference.repository}@{digest}",
        bundles=by_bundle,
        unpublished=frozenset(),
        directory=v1_dir,
    )
    served = await serve_catalog(kube, published, kind="migration")
    source = unique("v0-migration")
    await olmv0.create_catalog_source(kube, source, await olm_v0.serve_catalog(v0_dir))
    try:
        yield Catalogs(source=source, v1=served)
    finally:
        await olmv0.delete_catalog_source(kube, source)


# --- what must not change ----------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """The uids (and, for Pods, start times) of an operator's objects."""

    objects: dict[str, str]
    pods: dict[str, str]


async def _snapshot(kube: Client, namespace: str, crds: tuple[str, ...]) -> Snapshot:
    objects: dict[str, str] = {}
    for gvk in (kinds.DEPLOYMENT, kinds.SERVICE_ACCOUNT):
        for obj in (await kube.list(gvk, namespace=namespace)).items:
            if obj["metadata"]["name"] != "default" and not obj["metadata"]["name"].endswith("-installer"):
                objects[f"{obj['kind']}/{obj['metadata']['name']}"] = obj["metadata"]["uid"]
    for crd in crds:
        objects[f"CustomResourceDefinition/{crd}"] = (await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, crd))[
            "metadata"
        ]["uid"]
    pods = {
        p["metadata"]["uid"]: str(p.get("status", {}).get("startTime"))
        for p in (await kube.list(kinds.POD, namespace=namespace)).items
    }
    return Snapshot(objects, pods)


async def _gone(kube: Client, namespace: str) -> dict[str, list[str]]:
    """v0's own objects left in `namespace`."""
    left = {}
    for gvk in (SUBSCRIPTION, CSV, INSTALL_PLAN, OPERATOR_GROUP):
        left[gvk.kind] = [o["metadata"]["name"] for o in (await kube.list(gvk, namespace=namespace)).items]
    return left


def _v0_marks(obj: dict[str, Any]) -> list[str]:
    labels = obj["metadata"].get("labels") or {}
    marks = [k for k in labels if k.startswith("olm.owner") or k.startswith("operators.coreos.com/")]
    marks += [
        r["kind"]
        for r in obj["metadata"].get("ownerReferences") or ()
        if r["kind"] == "ClusterServiceVersion"
    ]
    return marks


async def _check_handed_over(kube: Client, name: str, namespace: str, before: Snapshot) -> None:
    """Everything `before` still there with the same uid, controlled by a revision of `name`, no v0
    mark left, every Pod the same; and v0's objects gone."""
    after = await _snapshot(
        kube, namespace, tuple(k.split("/", 1)[1] for k in before.objects if k.startswith("Custom"))
    )
    assert after.objects == before.objects
    assert after.pods == before.pods
    for key in before.objects:
        kind, obj_name = key.split("/", 1)
        gvk = {"Deployment": kinds.DEPLOYMENT, "ServiceAccount": kinds.SERVICE_ACCOUNT}.get(
            kind, kinds.CUSTOM_RESOURCE_DEFINITION
        )
        obj = await kube.get(
            gvk, obj_name, namespace=None if gvk == kinds.CUSTOM_RESOURCE_DEFINITION else namespace
        )
        controller = [r for r in obj["metadata"].get("ownerReferences") or () if r.get("controller")]
        assert [r["kind"] for r in controller] == [CLUSTER_OBJECT_SET.kind], key
        assert (obj["metadata"].get("labels") or {}).get(names.OWNER_NAME_LABEL) == name, key
        assert _v0_marks(dict(obj)) == [], key
        assert names.RETAINED_PACKAGE_ANNOTATION not in (obj["metadata"].get("annotations") or {}), key
    assert await _gone(kube, namespace) == {
        "Subscription": [],
        "ClusterServiceVersion": [],
        "InstallPlan": [],
        "OperatorGroup": [],
    }


@pytest.fixture
def pull(registry: Registry, tmp_path: Path) -> tuple[str, ...]:
    """The flags that let olmctl pull bundles from the session's registry."""
    return ("--registry-ca", str(registry.ca_file), "--cache-dir", str(tmp_path / "cache"))


async def _install_cat_facts(v0_installs: V0Installs, catalogs: Catalogs) -> olmv0.Installation:
    """cat-facts-operator through v0, OwnNamespace: the quickest real install."""
    return await v0_installs.install(
        "cat-facts-operator", CHANNEL, mode=olmv0.InstallMode.OWN_NAMESPACE, source=catalogs.source
    )


async def _assert_untouched(
    kube: Client, installed: olmv0.Installation, subscription: dict[str, Any]
) -> None:
    """A refused run wrote nothing: the Subscription as it was, no ClusterExtension, no installer."""
    after = await kube.get(SUBSCRIPTION, installed.subscription, namespace=installed.namespace)
    assert after["spec"] == subscription["spec"]
    assert after["metadata"].get("annotations") == subscription["metadata"].get("annotations")
    with pytest.raises(errors.NotFound):
        await kube.get(CLUSTER_EXTENSION, "cat-facts-operator")
    with pytest.raises(errors.NotFound):
        await kube.get(kinds.SERVICE_ACCOUNT, "cat-facts-operator-installer", namespace=installed.namespace)


# --- the tests -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    package: str
    mode: olmv0.InstallMode
    approval: olmv0.Approval = olmv0.Approval.AUTOMATIC
    starting_csv: str | None = None
    version: str = ""
    pending: str | None = None
    """The CSV of an upgrade v0 proposed and nobody approved."""


CASES = [
    pytest.param(
        Case("argocd-operator", olmv0.InstallMode.ALL_NAMESPACES, version="0.7.0"), id="AllNamespaces"
    ),
    pytest.param(
        Case("cat-facts-operator", olmv0.InstallMode.OWN_NAMESPACE, version="1.1.2"), id="OwnNamespace"
    ),
    pytest.param(
        Case(
            "etcd",
            olmv0.InstallMode.SINGLE_NAMESPACE,
            approval=olmv0.Approval.MANUAL,
            starting_csv="etcdoperator.v0.9.2",
            version="0.9.2",
            pending="etcdoperator.v0.9.4",
        ),
        id="SingleNamespace-Manual-upgrade-pending",
    ),
]


async def _extension(kube: Client, name: str) -> dict[str, Any]:
    return dict(await kube.get(CLUSTER_EXTENSION, name))


@pytest.mark.parametrize("case", CASES)
async def test_migrate_hands_every_object_over_without_a_restart(
    *,
    case: Case,
    kube: Client,
    catalogs: Catalogs,
    v0_installs: V0Installs,
    olmctl: Olmctl,
    pull: tuple[str, ...],
) -> None:
    installed = await v0_installs.install(
        case.package,
        CHANNEL,
        mode=case.mode,
        approval=case.approval,
        starting_csv=case.starting_csv,
        source=catalogs.source,
    )
    namespace = installed.namespace
    if case.pending:
        await olmv0.proposed_upgrade(kube, installed)  # the state this case migrates from
    before = await _snapshot(kube, namespace, installed.crds)
    assert before.pods, "v0's Deployment runs Pods"
    scope = ("-n", namespace, "--subscription", installed.subscription, "--catalog", catalogs.mapping)
    subscription = await kube.get(SUBSCRIPTION, installed.subscription, namespace=namespace)

    plan = await olmctl("migrate", *scope, *pull, "--dry-run")
    assert plan.code == 0, plan.err
    assert f"becomes:   ClusterExtension {case.package}: {case.package} {case.version} pinned" in plan.out
    assert f"CSV {installed.csv}" in plan.out
    if case.pending:
        assert f"pending:   v0's upgrade to {case.pending} waits for approval" in plan.out
    unchanged = await kube.get(SUBSCRIPTION, installed.subscription, namespace=namespace)
    assert unchanged["spec"] == subscription["spec"]
    assert unchanged["metadata"].get("annotations") == subscription["metadata"].get("annotations")
    with pytest.raises(errors.NotFound):
        await kube.get(CLUSTER_EXTENSION, case.package)

    started = time.monotonic()
    moved = await olmctl("migrate", *scope, *pull)
    took = time.monotonic() - started
    assert moved.code == 0, moved.err
    assert "0 Pods restarted" in moved.err
    extension = await _extension(kube, case.package)
    try:
        installed_condition = conditions.find(extension["status"]["conditions"], "Installed")
        assert installed_condition is not None
        assert installed_condition["status"] == "True"
        assert extension["status"]["install"]["bundle"]["version"] == case.version
        assert MIGRATED_FROM_ANNOTATION not in (extension["metadata"].get("annotations") or {})
        await _check_handed_over(kube, case.package, namespace, before)
        print(
            f"figures: {case.package} ({case.mode}): {len(before.objects)} objects kept, "
            f"{len(before.pods)} Pods kept, migrated in {took:.1f}s"
        )
    finally:
        await Extensions(kube).delete_and_wait_gone(case.package)


async def test_a_package_v0_installed_twice_is_refused_and_nothing_changes(
    *,
    kube: Client,
    catalogs: Catalogs,
    v0_installs: V0Installs,
    olmctl: Olmctl,
    pull: tuple[str, ...],
) -> None:
    first = await _install_cat_facts(v0_installs, catalogs)
    second = await _install_cat_facts(v0_installs, catalogs)
    subscription = await kube.get(SUBSCRIPTION, first.subscription, namespace=first.namespace)
    result = await olmctl("migrate", "-n", first.namespace, "--catalog", catalogs.mapping, *pull)
    assert result.code == 1
    wanted = sorted([first.namespace, second.namespace])
    assert f"installed by v0 in several namespaces ({', '.join(wanted)})" in result.out
    assert "nothing was changed" in result.err
    await _assert_untouched(kube, first, subscription)


async def test_a_migration_killed_half_way_is_finished_by_the_next_run(
    *,
    kube: Client,
    catalogs: Catalogs,
    v0_installs: V0Installs,
    control_plane: ControlPlane,
    olmctl: Olmctl,
    pull: tuple[str, ...],
) -> None:
    installed = await _install_cat_facts(v0_installs, catalogs)
    namespace = installed.namespace
    before = await _snapshot(kube, namespace, installed.crds)
    scope = ("-n", namespace, "--catalog", catalogs.mapping, *pull)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "olm.cli.main",
        "--kubeconfig",
        str(control_plane.kubeconfig),
        "--catalogd-ca",
        str(control_plane.ca_file),
        "migrate",
        *scope,
        cwd=REPO_ROOT,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stderr is not None
    seen: list[str] = []
    try:
        while True:
            line = (await asyncio.wait_for(process.stderr.readline(), timeout=120)).decode()
            assert line, f"olmctl ended before it created the ClusterExtension: {''.join(seen)}"
            seen.append(line)
            if "created; waiting" in line:
                break
    finally:
        process.kill()
        await process.wait()
    # Killed with the ClusterExtension written and v0's objects still there.
    assert (await _gone(kube, namespace))["ClusterServiceVersion"] == [installed.csv]
    try:
        finished = await olmctl("migrate", *scope)
        assert finished.code == 0, finished.err
        assert "0 Pods restarted" in finished.err
        await _check_handed_over(kube, "cat-facts-operator", namespace, before)
        again = await olmctl("migrate", *scope)
        assert again.code == 0
        assert "no OLM v0 installations found" in again.err
    finally:
        await Extensions(kube).delete_and_wait_gone("cat-facts-operator")


async def test_a_deployment_the_hand_over_would_change_is_refused_and_nothing_changes(
    *,
    kube: Client,
    catalogs: Catalogs,
    v0_installs: V0Installs,
    olm_v0: olmv0.OlmV0,
    olmctl: Olmctl,
    pull: tuple[str, ...],
) -> None:
    """Someone scaled v0's Deployment: applying v1's rendering would scale it back, so the plan
    names the field and nothing is written. v0's olm operator is stopped meanwhile: right after an install
    it may still re-run its Deployment installer, which would undo the scaling before olmctl looks."""
    installed = await _install_cat_facts(v0_installs, catalogs)
    namespace = installed.namespace
    csv = await kube.get(CSV, installed.csv, namespace=namespace)
    deployment = csv["spec"]["install"]["spec"]["deployments"][0]["name"]
    olm_v0.olm.stop()
    try:
        await kube.patch(kinds.DEPLOYMENT, deployment, {"spec": {"replicas": 2}}, namespace=namespace)
        before = await _snapshot(kube, namespace, installed.crds)
        subscription = await kube.get(SUBSCRIPTION, installed.subscription, namespace=namespace)
        result = await olmctl("migrate", "-n", namespace, "--catalog", catalogs.mapping, *pull)
    finally:
        olm_v0.olm.start()
        await olm_v0.olm.wait_ready()
    assert result.code == 1
    assert f"handing over Deployment {namespace}/{deployment} would change spec.replicas" in result.out
    assert "nothing was changed" in result.err
    await _assert_untouched(kube, installed, subscription)
    assert (await _snapshot(kube, namespace, installed.crds)).objects == before.objects
    assert (await kube.get(kinds.DEPLOYMENT, deployment, namespace=namespace))["spec"]["replicas"] == 2


async def test_a_migration_that_times_out_while_operator_controller_is_down_is_finished_by_the_next_run(
    *,
    kube: Client,
    catalogs: Catalogs,
    olm_v1: OperatorControllerProcess,
    v0_installs: V0Installs,
    olmctl: Olmctl,
    pull: tuple[str, ...],
) -> None:
    installed = await _install_cat_facts(v0_installs, catalogs)
    namespace = installed.namespace
    before = await _snapshot(kube, namespace, installed.crds)
    scope = ("-n", namespace, "--catalog", catalogs.mapping, *pull)
    olm_v1.kill()
    try:
        stalled = await olmctl("migrate", *scope, "--timeout", "5")
    finally:
        olm_v1.start()
        await olm_v1.wait_ready()
    try:
        assert stalled.code == 1
        assert "timed out after 5s waiting for clusterextension cat-facts-operator" in stalled.err
        # The ClusterExtension is written, v0's objects are all still there and still v0's.
        assert (await _gone(kube, namespace))["ClusterServiceVersion"] == [installed.csv]
        finished = await olmctl("migrate", *scope)
        assert finished.code == 0, finished.err
        assert "0 Pods restarted" in finished.err
        await _check_handed_over(kube, "cat-facts-operator", namespace, before)
    finally:
        await Extensions(kube).delete_and_wait_gone("cat-facts-operator")
