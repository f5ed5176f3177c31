"""A bundle too large for inline revisions: argocd-operator 0.18.0 (a 2 MB CRD, converted by a
webhook whose certificate cert-manager issues). Its revision refers to immutable, content-addressed
Secrets in the system namespace, the largest objects gzip-compressed, owned by the revision."""

from __future__ import annotations

import base64
from typing import Any

from e2e.operator_controller.conftest import SYSTEM_NAMESPACE, Extensions, ServedCatalog
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.certmanager import CertManager
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

GZIP_MAGIC = b"\x1f\x8b"
CONVERTED_CRD = "argocds.argoproj.io"


async def test_argocd_operator_installs_from_compressed_secrets(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    community_catalog: ServedCatalog,
    cert_manager: CertManager,
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    name = unique("argocd")
    await extensions.create(
        name,
        "argocd-operator",
        namespace,
        account,
        version="0.18.0",
        selector={"matchLabels": community_catalog.label},
    )
    found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=300)
    assert found["status"]["install"]["bundle"] == {"name": "argocd-operator.v0.18.0", "version": "0.18.0"}
    await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded")

    revision = await kube.get(CLUSTER_OBJECT_SET, f"{name}-1")
    items = [item for phase in revision["spec"]["phases"] for item in phase["objects"]]
    assert items
    assert all("ref" in item and "object" not in item for item in items), "every object is a Secret ref"

    secrets: dict[str, dict[str, Any]] = {}
    for item in items:
        ref = item["ref"]
        assert ref.get("namespace", SYSTEM_NAMESPACE) == SYSTEM_NAMESPACE, ref
        if ref["name"] not in secrets:
            secrets[ref["name"]] = dict(await kube.get(kinds.SECRET, ref["name"], namespace=SYSTEM_NAMESPACE))
        assert ref["key"] in secrets[ref["name"]]["data"], ref

    revision_uid = revision["metadata"]["uid"]
    for secret_name, secret in secrets.items():
        assert secret["immutable"] is True, secret_name
        assert secret["type"] == names.OBJECT_DATA_SECRET_TYPE, secret_name
        labels = secret["metadata"]["labels"]
        assert labels[names.OWNER_KIND_LABEL] == names.CLUSTER_EXTENSION, secret_name
        assert labels[names.OWNER_NAME_LABEL] == name, secret_name
        assert labels[names.REVISION_NAME_LABEL] == revision["metadata"]["name"], secret_name
        owners = [
            (ref["kind"], ref["name"], ref["uid"]) for ref in secret["metadata"].get("ownerReferences") or []
        ]
        assert (names.CLUSTER_OBJECT_SET, revision["metadata"]["name"], revision_uid) in owners, secret_name

    values = [base64.b64decode(value) for secret in secrets.values() for value in secret["data"].values()]
    assert any(value.startswith(GZIP_MAGIC) for value in values), "the largest objects are gzip-compressed"

    crd = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CONVERTED_CRD)
    assert conditions.of(crd, "Established").get("status") == "True", crd.get("status")
    assert crd["spec"]["conversion"]["strategy"] == "Webhook"

    async def ca_injected() -> bool:
        current = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CONVERTED_CRD)
        client_config = current["spec"]["conversion"]["webhook"]["clientConfig"]
        return bool(client_config.get("caBundle"))

    await eventually(
        ca_injected, what=f"the CA injected into {CONVERTED_CRD}'s conversion webhook", timeout=60
    )
    deployments = await kube.list(kinds.DEPLOYMENT, namespace=namespace)
    assert [d["metadata"]["name"] for d in deployments.items] == ["argocd-operator-controller-manager"]
