"""Drift: an installed object that is deleted or edited by someone else is restored by its revision."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.operator_controller.conftest import Extensions, ServedCatalog
from olm_runtime.client import Client, GroupVersionKind, errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.names import unique
from olm_testkit.plugin import Installer


async def install_test_operator(
    extensions: Extensions, installer: Installer, catalog: ServedCatalog, namespace: str
) -> str:
    account = await installer(namespace)
    name = unique("drift")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": catalog.label}
    )
    await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
    return name


async def wait_recreated(
    kube: Client, kind: GroupVersionKind, name: str, namespace: str, old_uid: str
) -> dict[str, Any]:
    """Wait until `kind/name` exists again as a new object (another uid); that object."""
    found: dict[str, Any] = {}

    async def recreated() -> bool:
        nonlocal found
        try:
            found = dict(await kube.get(kind, name, namespace=namespace))
        except errors.NotFound:
            return False
        return bool(found["metadata"]["uid"] != old_uid)

    await eventually(recreated, what=f"{kind.kind} {namespace}/{name} to be recreated", timeout=60)
    return found


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        pytest.param(kinds.DEPLOYMENT, "test-operator", id="deployment"),
        pytest.param(kinds.CONFIG_MAP, "test-configmap", id="configmap"),
    ],
)
async def test_deleted_object_comes_back(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
    *,
    kind: GroupVersionKind,
    name: str,
) -> None:
    kube = extensions.kube
    extension = await install_test_operator(extensions, installer, fixture_catalog, namespace)
    before = await kube.get(kind, name, namespace=namespace)
    await kube.delete(kind, name, namespace=namespace)
    after = await wait_recreated(kube, kind, name, namespace, before["metadata"]["uid"])
    assert after["metadata"]["labels"] == before["metadata"]["labels"]
    assert after.get("spec", after.get("data")) == before.get("spec", before.get("data"))
    await extensions.wait_condition(extension, "Installed", "True", reason="Succeeded")


async def test_edited_object_is_restored(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    kube = extensions.kube
    await install_test_operator(extensions, installer, fixture_catalog, namespace)
    before = await kube.get(kinds.CONFIG_MAP, "test-configmap", namespace=namespace)
    assert before["data"]["version"] == "v1.0.0"
    await kube.patch(kinds.CONFIG_MAP, "test-configmap", {"data": {"version": "edited"}}, namespace=namespace)

    async def restored() -> bool:
        found = await kube.get(kinds.CONFIG_MAP, "test-configmap", namespace=namespace)
        return bool(found["data"]["version"] == "v1.0.0")

    await eventually(restored, what="ConfigMap test-configmap to be restored", timeout=60)
