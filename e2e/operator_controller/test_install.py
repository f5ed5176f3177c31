"""Installing from a catalog: the fixture catalog's `test` package, end to end."""

from __future__ import annotations

from e2e.operator_controller.conftest import Extensions, ServedCatalog
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.client import kinds
from olm_testkit.names import unique
from olm_testkit.plugin import Installer


async def test_install_pinned_version(
    extensions: Extensions, installer: Installer, fixture_catalog: ServedCatalog, namespace: str
) -> None:
    account = await installer(namespace)
    name = unique("test")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
    assert found["status"]["install"]["bundle"] == {"name": "test-operator.1.0.0", "version": "1.0.0"}
    await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded")
    revision = await extensions.kube.get(CLUSTER_OBJECT_SET, f"{name}-1")
    assert revision["metadata"]["labels"][names.OWNER_NAME_LABEL] == name
    assert revision["spec"]["lifecycleState"] == "Active"
    deployments = await extensions.kube.list(kinds.DEPLOYMENT, namespace=namespace)
    assert [d["metadata"]["name"] for d in deployments.items] == ["test-operator"]
