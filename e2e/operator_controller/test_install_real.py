"""Installing real community bundles: kube-green (a validating webhook served with a cert-manager
certificate) and sailoperator (19 CRDs, the largest about 680 kB)."""

from __future__ import annotations

import base64
import gzip
from typing import Any

import orjson

from e2e.operator_controller.conftest import Extensions, ServedCatalog, wait_event
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import Client, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit import certmanager
from olm_testkit.certmanager import CertManager
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

INJECT_CA = "cert-manager.io/inject-ca-from"


async def test_kube_green_installs_with_its_webhook_certificate(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    community_catalog: ServedCatalog,
    cert_manager: CertManager,
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    name = unique("kube-green")
    await extensions.create(
        name,
        "kube-green",
        namespace,
        account,
        version="0.7.1",
        selector={"matchLabels": community_catalog.label},
    )
    found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=240)
    assert found["status"]["install"]["bundle"] == {"name": "kube-green.v0.7.1", "version": "0.7.1"}
    await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded")

    # The renderer's cert-manager objects: one self-signed Issuer, one Certificate issued by it.
    issuers = (await kube.list(certmanager.ISSUER, namespace=namespace)).items
    certificates = (await kube.list(certmanager.CERTIFICATE, namespace=namespace)).items
    assert len(issuers) == 1, [i["metadata"]["name"] for i in issuers]
    assert len(certificates) == 1, [c["metadata"]["name"] for c in certificates]
    issuer, certificate = issuers[0], certificates[0]
    assert issuer["spec"] == {"selfSigned": {}}
    assert certificate["spec"]["issuerRef"]["name"] == issuer["metadata"]["name"]
    certificate_name = certificate["metadata"]["name"]
    secret_name = certificate["spec"]["secretName"]

    async def certificate_ready() -> bool:
        current = await kube.get(certmanager.CERTIFICATE, certificate_name, namespace=namespace)
        return certmanager.condition_true(current, "Ready")

    await eventually(certificate_ready, what=f"Certificate {namespace}/{certificate_name} Ready", timeout=60)
    secret = await kube.get(kinds.SECRET, secret_name, namespace=namespace)
    ca = base64.b64decode(secret["data"]["ca.crt"])

    # The webhook configuration asks the cainjector for that Certificate's CA, and gets it.
    configurations = [
        c
        for c in (await kube.list(kinds.VALIDATING_WEBHOOK_CONFIGURATION)).items
        if (c["metadata"].get("annotations") or {}).get(INJECT_CA) == f"{namespace}/{certificate_name}"
    ]
    assert len(configurations) == 1, [c["metadata"]["name"] for c in configurations]
    configuration = configurations[0]["metadata"]["name"]

    async def injected() -> bool:
        current = await kube.get(kinds.VALIDATING_WEBHOOK_CONFIGURATION, configuration)
        bundles = [w["clientConfig"].get("caBundle") for w in current["webhooks"]]
        return bool(bundles) and all(b is not None and base64.b64decode(b) == ca for b in bundles)

    await eventually(injected, what=f"the CA injected into {configuration}", timeout=60)

    await wait_event(kube, name, type="Normal", reason="Installed", note_contains="kube-green.v0.7.1")


async def test_sailoperator_installs_its_large_crds(
    namespace: str, installer: Installer, extensions: Extensions, community_catalog: ServedCatalog
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    name = unique("sail")
    await extensions.create(
        name,
        "sailoperator",
        namespace,
        account,
        version="1.26.0",
        selector={"matchLabels": community_catalog.label},
    )
    found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=300)
    assert found["status"]["install"]["bundle"] == {"name": "sailoperator.v1.26.0", "version": "1.26.0"}
    await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded")

    revision = await kube.get(CLUSTER_OBJECT_SET, f"{name}-1")
    crd_names = [
        obj["metadata"]["name"]
        for obj in await _revision_objects(kube, revision)
        if obj["kind"] == "CustomResourceDefinition"
    ]
    assert len(crd_names) == 19, crd_names
    assert "istios.sailoperator.io" in crd_names
    for crd_name in crd_names:
        crd = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, crd_name)
        assert conditions.of(crd, "Established").get("status") == "True", (crd_name, crd.get("status"))
    deployments = await kube.list(kinds.DEPLOYMENT, namespace=namespace)
    assert [d["metadata"]["name"] for d in deployments.items] == ["sail-operator"]

    await wait_event(kube, name, type="Normal", reason="Installed", note_contains="sailoperator.v1.26.0")


async def _revision_objects(kube: Client, revision: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects of a revision, read from the Secrets its refs name."""
    objects: list[dict[str, Any]] = []
    secrets: dict[str, dict[str, Any]] = {}
    for phase in revision["spec"]["phases"]:
        for item in phase["objects"]:
            if "object" in item:
                objects.append(item["object"])
                continue
            ref = item["ref"]
            secret_name = ref["name"]
            if secret_name not in secrets:
                secrets[secret_name] = dict(
                    await kube.get(
                        kinds.SECRET,
                        secret_name,
                        namespace=ref.get("namespace") or names.DEFAULT_SYSTEM_NAMESPACE,
                    )
                )
            data = base64.b64decode(secrets[secret_name]["data"][ref["key"]])
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            objects.append(orjson.loads(data))
    return objects
