"""The harness itself: the published catalogs are served with local bundle references, and both
processes answer their probes."""

from __future__ import annotations

import ssl
from typing import Any

import aiohttp
import orjson

from e2e.operator_controller.conftest import ServedCatalog
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess


async def served_metas(control_plane: ControlPlane, catalog: ServedCatalog) -> list[dict[str, Any]]:
    context = ssl.create_default_context(cafile=str(control_plane.ca_file))
    connector = aiohttp.TCPConnector(ssl=context)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(f"{catalog.base_url}/api/v1/all") as response,
    ):
        assert response.status == 200, await response.text()
        body = await response.read()
    return [orjson.loads(line) for line in body.splitlines() if line]


def check_bundle_images(metas: list[dict[str, Any]], catalog: ServedCatalog, registry: Registry) -> None:
    """Every bundle points into the local registry; the published ones by digest."""
    bundles = {meta["name"]: meta["image"] for meta in metas if meta["schema"] == "olm.bundle"}
    assert bundles == dict(catalog.published.bundles)
    for name, image in bundles.items():
        assert image.startswith(f"{registry.host}/"), (name, image)
        assert ("@sha256:" in image) == (name not in catalog.published.unpublished), (name, image)


async def test_community_catalog_is_served_with_local_bundle_images(
    community_catalog: ServedCatalog, control_plane: ControlPlane, registry: Registry
) -> None:
    metas = await served_metas(control_plane, community_catalog)
    packages = {meta["name"] for meta in metas if meta["schema"] == "olm.package"}
    assert packages == {"kube-green", "sailoperator", "cat-facts-operator", "infinispan", "argocd-operator"}
    check_bundle_images(metas, community_catalog, registry)


async def test_fixture_catalog_is_served_with_local_bundle_images(
    fixture_catalog: ServedCatalog, control_plane: ControlPlane, registry: Registry
) -> None:
    metas = await served_metas(control_plane, fixture_catalog)
    packages = {meta["name"] for meta in metas if meta["schema"] == "olm.package"}
    assert packages == {
        "test",
        "test-mirrored",
        "dynamic",
        "webhook-operator",
        "own-namespace-operator",
        "single-namespace-operator",
        "large-crd-operator",
    }
    check_bundle_images(metas, fixture_catalog, registry)


async def test_both_processes_are_ready(
    catalogd: CatalogdProcess, operator_controller: OperatorControllerProcess
) -> None:
    for process in (catalogd, operator_controller):
        url = f"http://127.0.0.1:{process.ports['health']}/readyz"
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            assert response.status == 200, (process.component, await response.text())
