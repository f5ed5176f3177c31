"""A bundle the API server would refuse: upstream's test-operator 1.0.3 ships a ConfigMap with an
unknown top-level field. The extension says which object and field, and nothing is rolled out."""

from __future__ import annotations

from e2e.operator_controller.conftest import Extensions, ServedCatalog, wait_event
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import kinds
from olm_testkit.names import unique
from olm_testkit.plugin import Installer


async def test_broken_bundle_reports_the_offending_object(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    name = unique("broken")
    await extensions.create(
        name, "test", namespace, account, version="1.0.3", selector={"matchLabels": fixture_catalog.label}
    )
    found = await extensions.wait_condition(
        name,
        "Progressing",
        "False",
        reason="Blocked",
        message_contains='ConfigMap "wrong-test-configmap" has unknown field "wrongfield"',
        timeout=180,
    )
    message = conditions.of(found, "Progressing")["message"]
    assert '"test-operator.1.0.3"' in message, message
    assert conditions.of(found, "Installed")["status"] == "False", found["status"]

    revisions = await kube.list(CLUSTER_OBJECT_SET, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
    assert revisions.items == [], "no revision is created from a bundle that cannot be applied"
    config_maps = (await kube.list(kinds.CONFIG_MAP, namespace=namespace)).items
    assert [c["metadata"]["name"] for c in config_maps if c["metadata"]["name"] != "kube-root-ca.crt"] == []

    await wait_event(kube, name, type="Warning", reason="Failed", note_contains='unknown field "wrongfield"')
