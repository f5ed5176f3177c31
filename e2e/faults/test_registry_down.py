"""Fault drill: the image registry goes down while catalogd unpacks a catalog and while
operator-controller pulls a bundle.

The module runs a registry, a catalogd and an operator-controller of its own, so stopping the
registry disturbs no other test (`e2e/operator_controller/test_catalog_outage.py` covers catalogs
that are deleted or never serve; this covers the registry behind them). Each drill checks against
the API server:

- `Progressing=True/Retrying` with the cause (the refused connection) in its message;
- what was there before stays: the previous catalog content is served byte-identical, the
  installed bundle stays installed;
- once the registry is back, the new content is Serving/Installed within the backoff the
  controller had reached (counted from its log, see `backoff`), plus one reconcile's work.

`OLMPY_SOAK=1` keeps the registry down longer, so the backoff grows to tens of seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from e2e.faults import Figures
from e2e.faults.backoff import FAILURES, SOAK_FAILURES, LogMark, delay_after, outlast
from e2e.faults.catalogs import create_catalog, create_test_operator, served_bytes, wait_catalog
from olm.api.kinds import CLUSTER_CATALOG
from olm.operator_controller.clusterextension.options import Options
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry, RegistryOptions
from olm_testkit.catalogs import delete_catalog
from olm_testkit.extensions import Extensions
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.installer import create_cluster_admin_account
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

REFUSED = "Connection refused"
"""What a refused connection says (the cause the Retrying message must carry)."""
ONE_RECONCILE = 15.0
"""Allowance for the recovering reconcile itself (pull, unpack or render, apply) on a busy machine."""
RETRY_INTERVAL = Options().retry_interval
"""operator-controller's flat retry interval for an extension waiting on something outside it."""
SOAK_RETRIES = 6
"""Retry intervals the registry stays down in soak runs."""
BUNDLE_1_0_0 = {"name": "test-operator.1.0.0", "version": "1.0.0"}
BUNDLE_1_2_0 = {"name": "test-operator.1.2.0", "version": "1.2.0"}


@pytest.fixture(scope="module")
def own_registry(control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A registry no other test uses, so it may go down."""
    registry = Registry(
        RegistryOptions(
            state_dir=tmp_path_factory.mktemp("own-registry"),
            ca=control_plane.certificate_authority(),
            tie_to_parent=True,
        )
    )
    registry.up()
    try:
        yield registry
    finally:
        registry.down()


@pytest.fixture(scope="module")
def published(own_registry: Registry) -> dict[str, realdata.PublishedCatalog]:
    """Upstream's e2e test catalogs v1 and v2 with their bundles, in the registry that goes down."""
    pusher = RegistryClient(host=own_registry.host, ca_file=own_registry.ca_file)
    prefix = unique("e2e-down")
    return {
        version: realdata.publish_fixture_catalog(
            pusher, own_registry.host, version=version, repository_prefix=f"{prefix}/{version}"
        )
        for version in ("v1", "v2")
    }


@pytest.fixture(scope="module")
async def catalogd(
    control_plane: ControlPlane, kube: Client, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CatalogdProcess]:
    process = CatalogdProcess(
        control_plane, tmp_path_factory.mktemp("catalogd"), webhook=False, extra_args=("--log-format=json",)
    )
    async with process.running():
        yield process


@pytest.fixture(scope="module")
async def operator_controller(
    control_plane: ControlPlane, kube: Client, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[OperatorControllerProcess]:
    process = OperatorControllerProcess(
        control_plane, tmp_path_factory.mktemp("operator-controller"), extra_args=("--log-format=json",)
    )
    async with process.running():
        yield process


async def outlast_retries(retries: int) -> None:
    """Keep the registry down for `retries` of operator-controller's retry intervals."""
    await asyncio.sleep(retries * RETRY_INTERVAL)  # the fault's length, not a synchronisation


@pytest.fixture
async def registry_down(own_registry: Registry) -> AsyncIterator[Registry]:
    """The registry, brought back at teardown if the test left it down."""
    try:
        yield own_registry
    finally:
        if not own_registry.running():
            own_registry.resume()


async def test_registry_down_during_catalog_unpack(
    kube: Client,
    catalogd: CatalogdProcess,
    published: dict[str, realdata.PublishedCatalog],
    registry_down: Registry,
    *,
    control_plane: ControlPlane,
    soak: bool,
    figures: Figures,
) -> None:
    name = unique("e2e-down")
    old, new = published["v1"].digest_ref, published["v2"].digest_ref
    await create_catalog(kube, name, old)
    try:
        found = await wait_catalog(kube, name, "serving v1", serving_ref=old)
        base_url = found["status"]["urls"]["base"]
        before = await served_bytes(control_plane.ca_file, base_url)

        mark = LogMark.now(catalogd.log_file)
        registry_down.pause()
        await kube.patch(CLUSTER_CATALOG, name, {"spec": {"source": {"image": {"ref": new}}}})
        failing = await wait_catalog(
            kube, name, "Retrying: registry down", progressing="Retrying", message_contains=REFUSED
        )
        assert conditions.of(failing, "Progressing")["status"] == "True"
        assert registry_down.host in conditions.of(failing, "Progressing")["message"]
        assert conditions.of(failing, "Serving")["status"] == "True", failing["status"]
        assert failing["status"]["resolvedSource"]["image"]["ref"] == old
        assert await served_bytes(control_plane.ca_file, base_url) == before
        await outlast(mark, "clustercatalog", name, SOAK_FAILURES if soak else FAILURES)
        assert await served_bytes(control_plane.ca_file, base_url) == before

        failures = mark.failures("clustercatalog", name)
        await asyncio.to_thread(registry_down.resume)
        back = time.monotonic()
        await wait_catalog(kube, name, "serving v2", serving_ref=new, timeout=300)
        recovered = time.monotonic() - back
        backoff = delay_after(failures)
        assert recovered <= backoff + ONE_RECONCILE, (recovered, backoff, failures)
        assert await served_bytes(control_plane.ca_file, base_url) != before
        figures(
            {
                "failed unpacks while down": failures,
                "backoff when the registry came back (s)": round(backoff, 2),
                "Serving the new digest after (s)": round(recovered, 2),
            }
        )
    finally:
        await delete_catalog(kube, name)


async def test_registry_down_during_bundle_pull(
    kube: Client,
    catalogd: CatalogdProcess,
    operator_controller: OperatorControllerProcess,
    published: dict[str, realdata.PublishedCatalog],
    *,
    registry_down: Registry,
    namespace: str,
    soak: bool,
    figures: Figures,
) -> None:
    catalog = unique("e2e-down")
    await create_catalog(kube, catalog, published["v1"].digest_ref)
    extensions = Extensions(kube)
    account = unique("installer")
    await create_cluster_admin_account(kube, namespace, account, binding=account)
    name = unique("down")
    try:
        await wait_catalog(kube, catalog, "serving v1", serving_ref=published["v1"].digest_ref)
        await create_test_operator(extensions, name, namespace, account, catalog)
        found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
        assert found["status"]["install"]["bundle"] == BUNDLE_1_0_0

        registry_down.pause()
        down = time.monotonic()
        await extensions.patch_spec(name, {"source": {"catalog": {"version": "1.2.0"}}})
        failing = await extensions.wait_condition(
            name, "Progressing", "True", reason="Retrying", message_contains=REFUSED, timeout=120
        )
        assert registry_down.host in conditions.of(failing, "Progressing")["message"]
        assert conditions.of(failing, "Installed")["status"] == "True"
        assert failing["status"]["install"]["bundle"] == BUNDLE_1_0_0
        await kube.get(kinds.DEPLOYMENT, "test-operator", namespace=namespace)
        served = dict(await kube.get(CLUSTER_CATALOG, catalog))
        assert conditions.of(served, "Serving")["status"] == "True"
        if soak:
            await outlast_retries(SOAK_RETRIES)

        await asyncio.to_thread(registry_down.resume)
        back = time.monotonic()

        async def upgraded() -> bool:
            found = await extensions.get(name)
            progressing = conditions.of(found, "Progressing")
            return (found.get("status") or {}).get("install", {}).get("bundle") == BUNDLE_1_2_0 and (
                progressing.get("reason") == "Succeeded"
            )

        await eventually(upgraded, what=f"ClusterExtension {name} to have 1.2.0 installed", timeout=300)
        recovered = time.monotonic() - back
        # The extension controller retries at a flat interval rather than with backoff.
        assert recovered <= RETRY_INTERVAL + ONE_RECONCILE, recovered
        figures(
            {
                "registry down (s)": round(back - down, 1),
                "retry interval (s)": RETRY_INTERVAL,
                "Installed 1.2.0 after (s)": round(recovered, 2),
            }
        )
    finally:
        for created in list(extensions.created):
            await extensions.delete_and_wait_gone(created)
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.CLUSTER_ROLE_BINDING, account)
        await delete_catalog(kube, catalog)
