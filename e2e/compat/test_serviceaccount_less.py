"""ClusterExtensions without `spec.serviceAccount`, as upstream OLM v1.11 writes them
(docs/design/serviceaccount-less.md): held with the way out when operator-controller has no default
installer, as shipped; installed as the default installer once an administrator adds the
`manifests/default-installer` component. OLM's own identity installs nothing in either case.

operator-controller runs here as a process of this module, started by each test with the flags it
needs (one operator-controller per cluster at a time: this directory sorts before
e2e/operator_controller, whose session-wide one starts later).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from e2e.operator_controller.conftest import (
    EVENTS_NAMESPACE,
    SUITE_SCOPE,
    ServedCatalog,
    serve_catalog,
    wait_installed,
)
from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.cli.main import EXIT_OK
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import delete_catalog
from olm_testkit.certmanager import CertManager
from olm_testkit.extensions import Extensions, extension_object
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

COMPONENT = Path(__file__).resolve().parents[2] / "manifests" / "default-installer"
FIELD_MANAGER = "e2e-compat"


@pytest.fixture(scope="module")
async def catalog(
    control_plane: ControlPlane,
    olm_crds: None,
    kube: Client,
    pusher: RegistryClient,
    *,
    cert_manager: CertManager,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[ServedCatalog]:
    """kube-green from the community catalog, served by a catalogd of this module (cert-manager
    runs: kube-green's webhook certificate is a cert-manager Certificate)."""
    catalogd = CatalogdProcess(control_plane, tmp_path_factory.mktemp("catalogd"), scope_selector=SUITE_SCOPE)
    async with catalogd.running():
        published = await asyncio.to_thread(
            realdata.publish_community_catalog,
            pusher,
            pusher.host,
            packages=("kube-green",),
            repository_prefix=unique("e2e-compat"),
        )
        served = await serve_catalog(kube, published, kind="compat")
        try:
            yield served
        finally:
            await delete_catalog(kube, served.name)


@contextlib.asynccontextmanager
async def operator_controller(
    control_plane: ControlPlane, workdir: Path, *args: str
) -> AsyncIterator[OperatorControllerProcess]:
    process = OperatorControllerProcess(control_plane, workdir, extra_args=args)
    async with process.running():
        yield process


async def _condition(kube: Client, name: str, kind: str) -> dict[str, Any]:
    return conditions.of(await kube.get(CLUSTER_EXTENSION, name), kind)


async def _revision_identity(kube: Client, name: str) -> list[tuple[str, str]]:
    listed = await kube.list(CLUSTER_OBJECT_SET, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
    return [
        (
            r["metadata"]["annotations"][names.SERVICE_ACCOUNT_NAMESPACE_ANNOTATION],
            r["metadata"]["annotations"][names.SERVICE_ACCOUNT_NAME_ANNOTATION],
        )
        for r in listed.items
    ]


async def _events(kube: Client, name: str, reason: str) -> list[str]:
    listed = await kube.list(kinds.EVENTS_EVENT, namespace=EVENTS_NAMESPACE)
    return [
        str(e.get("note"))
        for e in listed.items
        if (e.get("regarding") or {}).get("name") == name and e.get("reason") == reason
    ]


async def test_without_a_default_installer_it_is_held_until_it_names_one(
    control_plane: ControlPlane,
    kube: Client,
    registry: Registry,
    *,
    catalog: ServedCatalog,
    namespace: str,
    tmp_path: Path,
) -> None:
    name = unique("no-sa")
    selector = {"matchLabels": catalog.label}
    async with operator_controller(control_plane, tmp_path / "operator-controller"):
        await kube.create(
            extension_object(name, "kube-green", namespace, None, version="0.7.0", selector=selector)
        )
        try:
            expected = (
                "spec.serviceAccount is not set and operator-controller has no --default-service-account: "
                "extensions are installed only as a ServiceAccount granted for them. Run "
                f"`kubectl -n {namespace} create serviceaccount installer` and `olmctl rbac kube-green "
                f"--namespace {namespace} --service-account installer --extension-name {name} "
                "--version '0.7.0' | kubectl apply -f -`, then set spec.serviceAccount.name: installer"
            )

            async def held() -> bool:
                progressing = await _condition(kube, name, "Progressing")
                return (progressing.get("status"), progressing.get("reason")) == ("False", "Blocked")

            await eventually(held, what=f"{name} held", timeout=60)
            assert (await _condition(kube, name, "Progressing"))["message"] == expected
            installed = await _condition(kube, name, "Installed")
            assert (installed["status"], installed["reason"]) == ("False", "Failed")
            assert await _events(kube, name, "ServiceAccountRequired") == [expected]
            assert await _revision_identity(kube, name) == []  # nothing was resolved, pulled or applied

            # The way out the message names: the account, its generated grant, then the field set.
            metadata = {"name": "installer", "namespace": namespace}
            await kube.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": metadata})
            olmctl = Olmctl(control_plane.kubeconfig, control_plane.ca_file)
            pull = ("--registry-ca", str(registry.ca_file), "--cache-dir", str(tmp_path / "cache"))
            where: tuple[str, ...] = ("--namespace", namespace, "--service-account", "installer")
            where += ("--extension-name", name, "--catalog", catalog.name)
            generated = await olmctl("rbac", "kube-green", *where, "--version", "0.7.0", *pull)
            assert generated.code == EXIT_OK, generated.err
            documents = [d for d in yaml.safe_load_all(generated.out) if d]
            for document in documents:
                await kube.apply(document, field_manager=FIELD_MANAGER, force=True)
            await settle.granted(kube, documents)
            await kube.patch(CLUSTER_EXTENSION, name, {"spec": {"serviceAccount": {"name": "installer"}}})
            await wait_installed(Extensions(kube=kube), name, "0.7.0", timeout=240)
            assert await _revision_identity(kube, name) == [(namespace, "installer")]
        finally:
            await Extensions(kube=kube).delete_and_wait_gone(name, timeout=180)


async def test_the_default_installer_component_installs_it_as_its_own_account(
    control_plane: ControlPlane, kube: Client, catalog: ServedCatalog, namespace: str, tmp_path: Path
) -> None:
    """What an administrator who adds `manifests/default-installer` gets: its ServiceAccount and
    binding, and the flag its patch adds to operator-controller's arguments."""
    component = yaml.safe_load((COMPONENT / "kustomization.yaml").read_text())
    (resources,) = component["resources"]
    documents = [d for d in yaml.safe_load_all((COMPONENT / resources).read_text()) if d]
    ((patch,),) = [yaml.safe_load(entry["patch"]) for entry in component["patches"]]
    (account,) = [d for d in documents if d["kind"] == "ServiceAccount"]
    for document in documents:
        await kube.apply(document, field_manager=FIELD_MANAGER, force=True)
    await settle.granted(kube, documents)
    name = unique("no-sa")
    try:
        async with operator_controller(control_plane, tmp_path / "operator-controller", patch["value"]):
            await kube.create(
                extension_object(
                    name,
                    "kube-green",
                    namespace,
                    None,
                    version="0.7.0",
                    selector={"matchLabels": catalog.label},
                )
            )
            try:
                await wait_installed(Extensions(kube=kube), name, "0.7.0", timeout=240)
                assert await _revision_identity(kube, name) == [
                    (account["metadata"]["namespace"], account["metadata"]["name"])
                ]
                assert await _events(kube, name, "ServiceAccountRequired") == []
            finally:
                await Extensions(kube=kube).delete_and_wait_gone(name, timeout=180)
    finally:
        for document in reversed(documents):
            with contextlib.suppress(errors.NotFound):
                kind = (
                    kinds.SERVICE_ACCOUNT
                    if document["kind"] == "ServiceAccount"
                    else kinds.CLUSTER_ROLE_BINDING
                )
                await kube.delete(
                    kind, document["metadata"]["name"], namespace=document["metadata"].get("namespace")
                )
