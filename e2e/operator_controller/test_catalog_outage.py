"""Catalogs that go away or never serve: an installed extension stays healthy and keeps being
reconciled without its catalog, and a selected catalog that does not serve is skipped, not fatal."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from e2e.operator_controller.conftest import (
    SUITE_LABELS,
    Extensions,
    ServedCatalog,
    serve_catalog,
    wait_event,
)
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.catalogs import cluster_catalog, delete_catalog
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

UNKNOWN = "DeprecationStatusUnknown"
BUNDLE_1_0_0 = {"name": "test-operator.1.0.0", "version": "1.0.0"}


@pytest.fixture
async def own_catalog(kube: Client, fixture_catalog: ServedCatalog) -> AsyncIterator[ServedCatalog]:
    """The fixture catalog served again under a name of this test's own, so the test may delete it."""
    served = await serve_catalog(kube, fixture_catalog.published, kind="outage")
    try:
        yield served
    finally:
        await delete_catalog(kube, served.name)


async def test_catalog_deleted_while_installed(
    namespace: str, installer: Installer, extensions: Extensions, own_catalog: ServedCatalog
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    name = unique("outage")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": own_catalog.label}
    )
    await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)

    await delete_catalog(kube, own_catalog.name)
    # The controller has noticed: deprecation can no longer be known, the installation stands.
    found = await extensions.wait_condition(name, "Deprecated", "Unknown", reason=UNKNOWN, timeout=60)
    assert conditions.of(found, "Installed")["status"] == "True"
    assert conditions.of(found, "Progressing")["reason"] == "Succeeded"
    assert found["status"]["install"]["bundle"] == BUNDLE_1_0_0
    await kube.get(kinds.DEPLOYMENT, "test-operator", namespace=namespace)

    # A spec change while the catalog is gone is still rolled out, from the installed bundle.
    await extensions.patch_spec(
        name,
        {
            "config": {
                "configType": "Inline",
                "inline": {"deploymentConfig": {"env": [{"name": "E2E_OUTAGE", "value": "catalog-gone"}]}},
            }
        },
    )
    found = await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded", timeout=120)
    assert found["metadata"]["generation"] == 2
    found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded")
    assert found["status"]["install"]["bundle"] == BUNDLE_1_0_0
    assert conditions.of(found, "Deprecated")["reason"] == UNKNOWN  # rolled out without the catalog
    deployment = await kube.get(kinds.DEPLOYMENT, "test-operator", namespace=namespace)
    for container in deployment["spec"]["template"]["spec"]["containers"]:
        assert {"name": "E2E_OUTAGE", "value": "catalog-gone"} in container.get("env", []), container
    revisions = await kube.list(CLUSTER_OBJECT_SET, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
    by_name = {r["metadata"]["name"]: r["spec"]["lifecycleState"] for r in revisions.items}
    assert by_name[f"{name}-2"] == "Active"

    # Drift is still repaired without the catalog.
    before = await kube.get(kinds.CONFIG_MAP, "test-configmap", namespace=namespace)
    await kube.delete(kinds.CONFIG_MAP, "test-configmap", namespace=namespace)

    async def recreated() -> bool:
        try:
            found = await kube.get(kinds.CONFIG_MAP, "test-configmap", namespace=namespace)
        except errors.NotFound:
            return False
        return bool(found["metadata"]["uid"] != before["metadata"]["uid"])

    await eventually(recreated, what="ConfigMap test-configmap to be recreated", timeout=60)
    found = await extensions.get(name)
    assert conditions.of(found, "Installed")["status"] == "True"
    assert found["status"]["install"]["bundle"] == BUNDLE_1_0_0


async def test_unserved_catalog_is_skipped(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
    pusher: RegistryClient,
) -> None:
    kube = extensions.kube
    broken = unique("e2e-missing")
    ref = f"{pusher.host}/{broken}/catalog:latest"
    await kube.create(cluster_catalog(broken, ref, labels=SUITE_LABELS, name_label=True))
    try:
        selector = {
            "matchExpressions": [
                {"key": names.METADATA_NAME_LABEL, "operator": "In", "values": [fixture_catalog.name, broken]}
            ]
        }
        account = await installer(namespace)
        name = unique("skip")
        await extensions.create(name, "test", namespace, account, version="1.0.0", selector=selector)
        found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
        assert found["status"]["install"]["bundle"] == BUNDLE_1_0_0
        assert conditions.of(await kube.get(CLUSTER_CATALOG, broken), "Serving").get("status") != "True"

        # A resolution failure names the catalog that was skipped.
        missing = unique("nothing")
        await extensions.create(missing, "test", namespace, account, version="9.9.9", selector=selector)
        message = 'no bundles found for package "test" matching version "9.9.9"'
        found = await extensions.wait_condition(
            missing, "Progressing", "True", reason="Retrying", message_contains=message, timeout=120
        )
        assert conditions.of(found, "Progressing")["message"] == message
        # In the Event of the change: each selected catalog with why it gave nothing, in name
        # order, then what to change.
        event = await wait_event(kube, missing, type="Warning", reason="Failed", note_contains=broken)
        considered = sorted(
            [(broken, "not serving"), (fixture_catalog.name, "no version in range, highest 1.2.0")]
        )
        # Other tests' catalogs in the session are counted as not selected; how many depends on them.
        assert re.fullmatch(
            re.escape(
                f"{message}; catalogs: " + ", ".join(f"{catalog} ({why})" for catalog, why in considered)
            )
            + r"(; \d+ not selected by spec\.source\.catalog\.selector)?"
            + re.escape("; change spec.source.catalog.version to include an available version"),
            str(event["note"]),
        )
    finally:
        await delete_catalog(kube, broken)
