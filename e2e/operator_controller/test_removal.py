"""Deleting a ClusterExtension with `spec.removal.policy: Cascade` (set by `delete_and_wait_gone`)
removes everything it brought: its ClusterObjectSets, their content Secrets in the system namespace
and every installed object, CRDs included; then the extension itself goes. The default policy,
`Retain`, is in `test_removal_policy`."""

from __future__ import annotations

import base64
import gzip
from typing import Any

import orjson

from e2e.operator_controller.conftest import SYSTEM_NAMESPACE, Extensions, ServedCatalog
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.client import Client, GroupVersionKind, errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.names import unique
from olm_testkit.plugin import Installer


async def revision_objects(kube: Client, cos: dict[str, Any]) -> list[dict[str, Any]]:
    """Every object of a revision, inline or read from its Secret."""
    out: list[dict[str, Any]] = []
    for phase in cos["spec"]["phases"]:
        for entry in phase["objects"]:
            if "object" in entry:
                out.append(entry["object"])
                continue
            ref = entry["ref"]
            secret = await kube.get(
                kinds.SECRET, ref["name"], namespace=ref.get("namespace") or SYSTEM_NAMESPACE
            )
            raw = base64.b64decode(secret["data"][ref["key"]])
            out.append(orjson.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw))
    return out


def kind_of(obj: dict[str, Any]) -> GroupVersionKind:
    return GroupVersionKind.from_api_version(obj["apiVersion"], obj["kind"])


async def exists(kube: Client, obj: dict[str, Any]) -> bool:
    try:
        await kube.get(kind_of(obj), obj["metadata"]["name"], namespace=obj["metadata"].get("namespace"))
    except errors.NotFound:
        return False
    return True


async def test_deleting_the_extension_removes_everything(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    name = unique("removal")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
    selector = f"{names.OWNER_NAME_LABEL}={name}"
    revisions = (await kube.list(CLUSTER_OBJECT_SET, label_selector=selector)).items
    assert [r["metadata"]["name"] for r in revisions] == [f"{name}-1"]
    secrets = (await kube.list(kinds.SECRET, namespace=SYSTEM_NAMESPACE, label_selector=selector)).items
    assert secrets
    installed = await revision_objects(kube, dict(revisions[0]))
    kinds_installed = {obj["kind"] for obj in installed}
    assert {
        "CustomResourceDefinition",
        "Deployment",
        "ClusterRole",
        "ClusterRoleBinding",
        "ServiceAccount",
        "ConfigMap",
        "NetworkPolicy",
    } <= kinds_installed, kinds_installed
    for obj in installed:
        assert await exists(kube, obj), f"{obj['kind']} {obj['metadata']['name']} was not installed"

    await extensions.delete_and_wait_gone(name)

    # The revisions release their objects before they let go, and the extension waits for them.
    assert (await kube.list(CLUSTER_OBJECT_SET, label_selector=selector)).items == []
    left = [f"{obj['kind']} {obj['metadata']['name']}" for obj in installed if await exists(kube, obj)]
    assert left == [], f"still installed after the extension is gone: {left}"

    # The Secrets belong to the revisions: the garbage collector deletes them after those.
    async def secrets_gone() -> bool:
        listed = await kube.list(kinds.SECRET, namespace=SYSTEM_NAMESPACE, label_selector=selector)
        return not listed.items

    await eventually(secrets_gone, what=f"the content Secrets of {name} to be deleted", timeout=90)
