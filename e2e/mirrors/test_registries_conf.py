"""Catalogs and bundles pulled through registries.conf mirrors, against the real control plane and
the session's registry.

Upstream's fixture catalog is published into the session's registry but names itself and its
bundles under `mirrored.example:5000`, a registry that exists only through the registries.conf
(`.example` never resolves). The file, projected the way the kubelet mounts a ConfigMap, gives that
registry two mirrors: a loopback port where nothing listens (a mirror that is down) and the session's
registry. A catalogd and an operator-controller of this module (one operator-controller per cluster:
this directory sorts before e2e/operator_controller, whose session-wide one starts later) read it
with `--registries-conf`, and follow its changes without a restart.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.process import testing_seams
from olm_runtime import conditions
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.process import free_ports
from olm_runtime.testing.registry import Registry
from olm_testkit import catalogs
from olm_testkit.catalogs import delete_catalog
from olm_testkit.extensions import Extensions
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.installer import create_cluster_admin_account
from olm_testkit.kubeletvolume import project
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

MIRRORED = "mirrored.example:5000"
"""Where the catalog and its bundles say they live: a registry that exists only as a mirror rule."""
BLOCKED = "blocked.example:5000"
"""A registry the file blocks (and, later, gives a mirror)."""
SCOPE = "mirrors"
"""This module's ClusterCatalogs carry `testing_seams.SCOPE_LABEL: mirrors`; its catalogd serves only them."""
BUNDLE_1_0_0 = {"name": "test-operator.1.0.0", "version": "1.0.0"}


@dataclass(frozen=True)
class Setup:
    conf_dir: Path
    """The mounted `/etc/containers`: `registries.conf` in it, switched over as the kubelet does."""
    down: str
    """`127.0.0.1:<port>` where nothing listens: mirror 1."""
    registry: Registry
    """The session's registry: mirror 2."""

    @property
    def conf(self) -> Path:
        return self.conf_dir / "registries.conf"

    def write(self, *, blocked_mirror: bool) -> None:
        """The rules: `MIRRORED` through mirror 1 then mirror 2; `BLOCKED` blocked, with the
        session's registry as its mirror when `blocked_mirror`."""
        text = (
            f'[[registry]]\nlocation = "{MIRRORED}"\n'
            f'[[registry.mirror]]\nlocation = "{self.down}"\n'
            f'[[registry.mirror]]\nlocation = "{self.registry.host}"\n'
            f'[[registry]]\nlocation = "{BLOCKED}"\nblocked = true\n'
        )
        if blocked_mirror:
            text += f'[[registry.mirror]]\nlocation = "{self.registry.host}"\n'
        project(self.conf_dir, {"registries.conf": text.encode()})


@pytest.fixture(scope="module")
def setup(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Setup:
    (port,) = free_ports(1)
    found = Setup(tmp_path_factory.mktemp("etc-containers"), f"127.0.0.1:{port}", registry)
    found.write(blocked_mirror=False)
    return found


@pytest.fixture(scope="module")
def published(pusher: RegistryClient) -> realdata.PublishedCatalog:
    """Upstream's fixture catalog v1, pushed to the session's registry, named under `MIRRORED`."""
    return realdata.publish_fixture_catalog(
        pusher, MIRRORED, version="v1", repository_prefix=unique("e2e-mirrors")
    )


@pytest.fixture(scope="module")
async def catalogd(
    control_plane: ControlPlane, olm_crds: None, setup: Setup, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CatalogdProcess]:
    process = CatalogdProcess(
        control_plane,
        tmp_path_factory.mktemp("catalogd"),
        webhook=False,
        scope_selector=f"{testing_seams.SCOPE_LABEL}={SCOPE}",
        extra_args=(f"--registries-conf={setup.conf}",),
    )
    async with process.running():
        yield process


@pytest.fixture(scope="module")
async def operator_controller(
    control_plane: ControlPlane, olm_crds: None, setup: Setup, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[OperatorControllerProcess]:
    process = OperatorControllerProcess(
        control_plane,
        tmp_path_factory.mktemp("operator-controller"),
        extra_args=(f"--registries-conf={setup.conf}",),
    )
    async with process.running():
        yield process


async def _create_catalog(kube: Client, ref: str) -> str:
    name = unique("e2e-mirrors")
    labels = {testing_seams.SCOPE_LABEL: SCOPE}
    await kube.create(catalogs.cluster_catalog(name, ref, labels=labels, name_label=True))
    return name


async def _wait_progressing(kube: Client, name: str, reason: str, message: str) -> dict[str, str]:
    """Until the catalog's `Progressing` has `reason` and a message starting with `message`."""

    def reached(found: dict[str, object]) -> bool:
        progressing = conditions.of(found, "Progressing")
        return progressing.get("reason") == reason and str(progressing.get("message")).startswith(message)

    found = await catalogs.wait_catalog(kube, name, f"{name} {reason}", reached, timeout=120)
    return dict(conditions.of(found, "Progressing"))


async def test_a_catalog_and_its_bundles_come_through_the_second_mirror_when_the_first_is_down(
    kube: Client,
    catalogd: CatalogdProcess,
    operator_controller: OperatorControllerProcess,
    published: realdata.PublishedCatalog,
    namespace: str,
) -> None:
    assert published.digest_ref.startswith(f"{MIRRORED}/")
    assert published.bundles["test-operator.1.0.0"].startswith(f"{MIRRORED}/")
    catalog = await _create_catalog(kube, published.digest_ref)
    extensions = Extensions(kube)
    account = unique("installer")
    await create_cluster_admin_account(kube, namespace, account, binding=account)
    name = unique("mirrored")
    try:
        found = await catalogs.wait_serving(kube, catalog, published.digest_ref, timeout=180)
        # Recorded under the reference the catalog names, whatever mirror served it.
        assert found["status"]["resolvedSource"]["image"]["ref"] == published.digest_ref
        await extensions.create(
            name,
            "test",
            namespace,
            account,
            version="1.0.0",
            selector={"matchLabels": {names.METADATA_NAME_LABEL: catalog}},
        )
        installed = await extensions.wait_condition(
            name, "Installed", "True", reason="Succeeded", timeout=240
        )
        assert installed["status"]["install"]["bundle"] == BUNDLE_1_0_0
        revisions = await kube.list(CLUSTER_OBJECT_SET, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
        assert [r["metadata"]["annotations"][names.BUNDLE_REFERENCE_ANNOTATION] for r in revisions.items] == [
            published.bundles["test-operator.1.0.0"]
        ]
    finally:
        await extensions.delete_and_wait_gone(name, timeout=180)
        await delete_catalog(kube, catalog)


async def test_when_every_source_fails_the_condition_names_each_one(
    kube: Client, catalogd: CatalogdProcess, published: realdata.PublishedCatalog, setup: Setup
) -> None:
    absent = f"{published.digest_ref.rpartition('/')[0]}/absent@sha256:{'0' * 64}"
    repository = absent.split("/", 1)[1].partition("@")[0]
    digest = absent.rpartition("@")[2]
    catalog = await _create_catalog(kube, absent)
    try:
        expected = (
            f"pulling {absent}: every source failed (mirrors of {setup.conf}): "
            f"[1] fetching manifest {setup.down}/{repository}@{digest}: ClientConnectorError: "
            "Connection refused (gave up after 4 attempts); "
            f"[2] fetching manifest {setup.registry.host}/{repository}@{digest}: not found "
            "(MANIFEST_UNKNOWN: manifest unknown); "
            # The resolver's words for a name that does not resolve differ between machines.
            f"[3] fetching manifest {absent}: ClientConnectorDNSError: "
        )
        progressing = await _wait_progressing(kube, catalog, "Retrying", expected)
        assert progressing["message"].endswith("(gave up after 4 attempts)"), progressing
    finally:
        await delete_catalog(kube, catalog)


async def test_a_blocked_registry_is_refused_until_the_changed_file_gives_it_a_mirror(
    kube: Client, catalogd: CatalogdProcess, pusher: RegistryClient, setup: Setup
) -> None:
    # Catalog v2: an image no test pulled before (a digest already in the blob cache needs no source).
    blocked = await asyncio.to_thread(
        realdata.publish_fixture_catalog,
        pusher,
        BLOCKED,
        version="v2",
        repository_prefix=unique("e2e-mirrors-blocked"),
    )
    ref = blocked.digest_ref
    catalog = await _create_catalog(kube, ref)
    try:
        expected = (
            f"pulling {ref}: fetching manifest {ref}: registry {BLOCKED} is blocked by {setup.conf} "
            f"([[registry]] prefix '{BLOCKED}' sets blocked = true)"
        )
        progressing = await _wait_progressing(kube, catalog, "Retrying", expected)
        assert progressing["message"] == expected
        # The same process, the file changed as a ConfigMap update changes it: served by the mirror.
        await asyncio.to_thread(setup.write, blocked_mirror=True)
        found = await catalogs.wait_serving(kube, catalog, ref, timeout=180)
        assert found["status"]["resolvedSource"]["image"]["ref"] == ref
    finally:
        setup.write(blocked_mirror=False)
        await delete_catalog(kube, catalog)
