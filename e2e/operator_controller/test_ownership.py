"""Two extensions of one package: the objects belong to whoever installed them first. The second
extension reports the collision and stops; the first keeps its objects untouched."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from e2e.operator_controller.conftest import Extensions, ServedCatalog
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

CRD_NAME = "olme2etests.olm.operatorframework.io"
DEPLOYMENT = "test-operator"


@pytest.fixture
async def other_namespace(kube: Client) -> AsyncIterator[str]:
    """A second namespace, deleted after the test (requested before `extensions`, so it outlives
    the extensions installed into it)."""
    name = unique("t-other")
    await kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.NAMESPACE, name)


def ownership(obj: dict[str, Any]) -> dict[str, Any]:
    """What says who manages an object: its uid, ownerReferences and labels."""
    metadata = obj["metadata"]
    return {
        "uid": metadata["uid"],
        "ownerReferences": metadata.get("ownerReferences"),
        "labels": metadata.get("labels"),
    }


async def snapshot(kube: Client, namespace: str) -> dict[str, Any]:
    crd = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD_NAME)
    deployment = await kube.get(kinds.DEPLOYMENT, DEPLOYMENT, namespace=namespace)
    return {
        "crd": {**ownership(crd), "spec": crd["spec"]},
        "deployment": {**ownership(deployment), "spec": deployment["spec"]},
    }


async def test_second_extension_of_a_package_reports_the_collision(
    namespace: str,
    other_namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
) -> None:
    kube = extensions.kube
    selector = {"matchLabels": fixture_catalog.label}
    first = unique("owner-first")
    await extensions.create(
        first, "test", namespace, await installer(namespace), version="1.0.0", selector=selector
    )
    await extensions.wait_condition(first, "Installed", "True", reason="Succeeded", timeout=180)
    before = await snapshot(kube, namespace)
    first_revision = f"{first}-1"
    assert [ref["name"] for ref in before["crd"]["ownerReferences"]] == [first_revision]

    second = unique("owner-second")
    await extensions.create(
        second, "test", other_namespace, await installer(other_namespace), version="1.0.0", selector=selector
    )
    found = await extensions.wait_condition(
        second,
        "Progressing",
        "True",
        reason="Retrying",
        message_contains="revision object collisions",
        timeout=180,
    )
    message = conditions.of(found, "Progressing")["message"]
    assert CRD_NAME in message, message
    assert first_revision in message, message
    assert conditions.of(found, "Installed")["status"] == "False", found["status"]
    assert "install" not in found["status"] or found["status"]["install"] is None

    # Nothing past the colliding phase was applied for the second extension ...
    deployments = await kube.list(kinds.DEPLOYMENT, namespace=other_namespace)
    assert deployments.items == []
    # ... and the first one's objects are as they were.
    await extensions.wait_condition(first, "Installed", "True", reason="Succeeded")
    await extensions.wait_condition(first, "Progressing", "True", reason="Succeeded")
    after = await snapshot(kube, namespace)
    assert after == before
