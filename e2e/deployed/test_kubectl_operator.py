"""Upstream's CLI, `kubectl operator olmv1`, against OLM deployed as Pods: every catalog and extension
command a user of upstream OLM v1 runs, with real bundles, and what it left in the cluster.

The CLI is built from the source `OLMPY_KUBECTL_OPERATOR` names (`olm_testkit.kubectl_operator`);
without it these tests are skipped with the reason. `search` reaches a catalogd Pod by port-forward
through the API server and verifies catalogd's certificate for `localhost` with the CA of the
`catalogd*` Secrets in olmv1-system, as it does against upstream. `docs/compat/kubectl-operator.md`
lists the commands and their results.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from e2e.deployed.conftest import DemoExtensions, DeployedOLM, ServedCatalog
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION
from olm_runtime import conditions
from olm_runtime.client import errors, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_testkit import kubectl_operator
from olm_testkit.names import unique

KUBE_GREEN_CRD = "sleepinfos.kube-green.com"


@pytest.fixture(scope="module")
def cli(control_plane: ControlPlane) -> kubectl_operator.KubectlOperator:
    checkout = kubectl_operator.source()
    if checkout is None:
        pytest.skip(kubectl_operator.UNSET)
    return kubectl_operator.KubectlOperator(kubectl_operator.build(checkout), control_plane.kubeconfig)


async def _gone(deployed: DeployedOLM, kind: Any, name: str) -> bool:
    try:
        await deployed.kube.get(kind, name)
    except errors.NotFound:
        return True
    return False


async def test_catalog_create_get_update_search_and_delete(
    cli: kubectl_operator.KubectlOperator, deployed: DeployedOLM, demo_catalog: ServedCatalog
) -> None:
    name = unique("kop-catalog")
    image = demo_catalog.published.digest_ref
    # `--available true` is needed against upstream too: without it the CLI waits for `Serving`
    # False (its default availability is the empty string, not Available), which neither upstream's
    # catalogd nor ours reports for a catalog that unpacks, so it times out and deletes the catalog.
    created = await cli(
        "olmv1", "create", "catalog", name, image, "--available", "true", "--priority", "5",
        "--labels", "team=e2e", "--timeout", "3m",
    )  # fmt: skip
    try:
        assert created.code == 0, created.err
        catalog = await deployed.kube.get(CLUSTER_CATALOG, name)
        assert catalog["spec"]["source"] == {"type": "Image", "image": {"ref": image}}
        assert catalog["spec"]["priority"] == 5
        assert catalog["metadata"]["labels"]["team"] == "e2e"
        assert catalog["metadata"]["labels"][names.METADATA_NAME_LABEL] == name
        assert conditions.of(catalog, "Serving").get("status") == "True"

        shown = await cli("olmv1", "get", "catalog", name, "-o", "json")
        assert shown.code == 0, shown.err
        assert _names(shown.out) == [name]
        table = await cli("olmv1", "get", "catalog")
        assert table.code == 0, table.err
        # NAME AVAILABILITY PRIORITY LASTUNPACKED SERVING AGE
        (row,) = [line.split() for line in table.out.splitlines() if line.split()[:1] == [name]]
        assert row[:3] == [name, "Available", "5"], row
        assert row[-2] == "True", row

        updated = await cli("olmv1", "update", "catalog", name, "--priority", "7")
        assert updated.code == 0, updated.err
        assert (await deployed.kube.get(CLUSTER_CATALOG, name))["spec"]["priority"] == 7

        listed = await cli("olmv1", "search", "catalog", "--catalog", name)
        assert listed.code == 0, listed.err
        assert {"kube-green", "cat-facts-operator"} <= set(listed.out.split()), listed.out
        versions = await cli(
            "olmv1", "search", "catalog", "--catalog", name, "--package", "kube-green", "--list-versions"
        )
        assert versions.code == 0, versions.err
        assert {"0.7.0", "0.7.1"} <= set(versions.out.split()), versions.out
        missing = await cli("olmv1", "search", "catalog", "--catalog", name, "--package", "no-such-package")
        assert missing.code != 0
        assert (
            f'package "no-such-package" was not found in ClusterCatalog "{name}"' in missing.out + missing.err
        )

        disabled = await cli("olmv1", "update", "catalog", name, "--available", "false")
        assert disabled.code == 0, disabled.err

        async def not_serving() -> bool:
            found = await deployed.kube.get(CLUSTER_CATALOG, name)
            return conditions.of(found, "Serving").get("status") == "False"

        await eventually(not_serving, what=f"ClusterCatalog {name} to stop serving")
        unavailable = await cli("olmv1", "search", "catalog", "--catalog", name)
        assert unavailable.code != 0
        assert (
            "failed to query for catalog contents: catalog(s) unhealthy" in unavailable.out + unavailable.err
        )
    finally:
        deleted = await cli("olmv1", "delete", "catalog", name, "--timeout", "2m")
    assert deleted.code == 0, deleted.err
    await eventually(lambda: _gone(deployed, CLUSTER_CATALOG, name), what=f"ClusterCatalog {name} gone")


async def test_extension_install_get_update_and_delete(
    cli: kubectl_operator.KubectlOperator,
    deployed: DeployedOLM,
    demo_catalog: ServedCatalog,
    extensions: DemoExtensions,
    namespace: str,
) -> None:
    name = unique("kop-kube-green")
    account = await extensions.installer(namespace)
    where = ("--namespace", namespace, "--package-name", "kube-green", "--service-account", account)
    selector = ("--catalog-selector", f"{names.METADATA_NAME_LABEL}={demo_catalog.name}")

    preview = await cli(
        "olmv1", "install", "extension", name, *where, "-v", "0.7.0", "--dry-run", "All", "-o", "yaml"
    )
    assert preview.code == 0, preview.err
    previewed = yaml.safe_load(preview.out)
    assert previewed["spec"]["source"]["catalog"]["packageName"] == "kube-green"
    assert await _gone(deployed, CLUSTER_EXTENSION, name)  # a dry run creates nothing

    extensions.created.append(name)  # removed at teardown if the test fails before it deletes
    # The enforcement is given because `update extension` writes it through pointers it does not
    # check: on an extension without spec.install.preflight.crdUpgradeSafety the CLI panics, against
    # upstream as here (docs/compat/kubectl-operator.md).
    installed = await cli(
        "olmv1", "install", "extension", name, *where, *selector, "-v", "0.7.0",
        "--crd-upgrade-safety-enforcement", "Strict", "--timeout", "4m",
    )  # fmt: skip
    assert installed.code == 0, installed.err
    found = await extensions.wait_installed(name, "0.7.0", timeout=10)
    assert found["spec"]["serviceAccount"] == {"name": account}
    assert found["spec"]["source"]["catalog"]["selector"] == {
        "matchLabels": {names.METADATA_NAME_LABEL: demo_catalog.name}
    }

    shown = await cli("olmv1", "get", "extension", name, "-o", "json")
    assert shown.code == 0, shown.err
    assert _names(shown.out) == [name]
    table = await cli("olmv1", "get", "extension")
    assert table.code == 0, table.err
    # NAME INSTALLED-BUNDLE VERSION SOURCE-TYPE INSTALLED PROGRESSING AGE
    (row,) = [line.split() for line in table.out.splitlines() if line.split()[:1] == [name]]
    assert row[:6] == [name, "kube-green.v0.7.0", "0.7.0", "Catalog", "True", "True"], row

    updated = await cli("olmv1", "update", "extension", name, "-v", "0.7.1", "--timeout", "4m")
    assert updated.code == 0, updated.err
    await extensions.wait_installed(name, "0.7.1")
    await extensions.wait_active_revisions(name, [f"{name}-2"])

    await extensions.wait_custom_resources_served(name)
    deleted = await cli("olmv1", "delete", "extension", name, "--timeout", "3m")
    assert deleted.code == 0, deleted.err
    await eventually(lambda: _gone(deployed, CLUSTER_EXTENSION, name), what=f"{name} gone", timeout=180)
    extensions.created.remove(name)
    deployments = await deployed.kube.list(kinds.DEPLOYMENT, namespace=namespace)
    assert deployments.items == []
    # The CLI deletes with the API's default removal policy, Retain: the CRD stays, marked for the
    # next install of the package. Removed here so that no later test meets it.
    crd = await deployed.kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, KUBE_GREEN_CRD)
    assert crd["metadata"]["annotations"][names.RETAINED_PACKAGE_ANNOTATION] == "kube-green"
    await deployed.kube.delete(kinds.CUSTOM_RESOURCE_DEFINITION, KUBE_GREEN_CRD)
    await eventually(
        lambda: _gone(deployed, kinds.CUSTOM_RESOURCE_DEFINITION, KUBE_GREEN_CRD),
        what=f"{KUBE_GREEN_CRD} gone",
    )


def _names(output: str) -> list[str]:
    """The names in `get -o json` output: one object, a list of them, or a List."""
    parsed = json.loads(output)
    if isinstance(parsed, dict) and "items" in parsed:
        parsed = parsed["items"]
    items = parsed if isinstance(parsed, list) else [parsed]
    return [item["metadata"]["name"] for item in items]
