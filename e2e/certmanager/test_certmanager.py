"""cert-manager issues certificates and injects CAs on the local control plane.

The `cert_manager` fixture runs the pinned cert-manager controller and cainjector as processes; these
tests use only what the OLM manifests rely on: a self-signed Issuer, a Certificate written to a
`kubernetes.io/tls` Secret, and CA injection into an admission webhook configuration.
"""

from __future__ import annotations

import base64
import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from cryptography import x509

from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit import certmanager
from olm_testkit.certmanager import CertManager

DNS_NAMES = ["webhook.example.svc", "webhook.example.svc.cluster.local"]


def self_signed_issuer(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Issuer",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selfSigned": {}},
    }


def certificate(name: str, namespace: str, *, issuer: str, secret: str) -> dict[str, Any]:
    return {
        "apiVersion": "cert-manager.io/v1",
        "kind": "Certificate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "secretName": secret,
            "dnsNames": DNS_NAMES,
            "issuerRef": {"kind": "Issuer", "name": issuer},
            "privateKey": {"algorithm": "ECDSA", "size": 256},
        },
    }


async def issued_secret(client: Client, namespace: str, name: str, secret: str) -> dict[str, Any]:
    """Wait for Certificate `name` to be Ready and return the Secret it wrote."""

    async def ready() -> bool:
        current = await client.get(certmanager.CERTIFICATE, name, namespace=namespace)
        return certmanager.condition_true(current, "Ready")

    await eventually(ready, what=f"Certificate {namespace}/{name} to become Ready")
    return await client.get(kinds.SECRET, secret, namespace=namespace)


@pytest.fixture
async def tls_secret(cert_manager: CertManager, admin_client: Client, namespace: str) -> dict[str, Any]:
    """A self-signed Certificate `serving` in the test namespace, issued into Secret `serving-tls`."""
    await admin_client.apply(self_signed_issuer("selfsigned", namespace))
    await admin_client.apply(certificate("serving", namespace, issuer="selfsigned", secret="serving-tls"))
    return await issued_secret(admin_client, namespace, "serving", "serving-tls")


async def test_a_certificate_from_a_self_signed_issuer_is_written_to_a_tls_secret(
    tls_secret: dict[str, Any],
) -> None:
    assert tls_secret["type"] == "kubernetes.io/tls"
    assert set(tls_secret["data"]) >= {"tls.crt", "tls.key", "ca.crt"}
    leaf = x509.load_pem_x509_certificate(base64.b64decode(tls_secret["data"]["tls.crt"]))
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sorted(names.get_values_for_type(x509.DNSName)) == sorted(DNS_NAMES)
    # Self-signed: the CA cert-manager reports is the certificate itself.
    assert base64.b64decode(tls_secret["data"]["ca.crt"]) == base64.b64decode(tls_secret["data"]["tls.crt"])


@pytest.fixture
async def webhook_configuration(admin_client: Client, namespace: str) -> AsyncIterator[str]:
    """A cluster-scoped ValidatingWebhookConfiguration asking for the CA of Certificate `serving`;
    its rule matches no real resource, so the API server never calls it."""
    name = f"cainjector-{uuid.uuid4().hex[:8]}"
    await admin_client.apply(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {
                "name": name,
                "annotations": {"cert-manager.io/inject-ca-from": f"{namespace}/serving"},
            },
            "webhooks": [
                {
                    "name": "validate.widgets.e2e.olm.test",
                    "clientConfig": {"url": "https://127.0.0.1:1/validate"},
                    "rules": [
                        {
                            "apiGroups": ["e2e.olm.test"],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["widgets"],
                        }
                    ],
                    "failurePolicy": "Ignore",
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                }
            ],
        }
    )
    try:
        yield name
    finally:
        with contextlib.suppress(errors.NotFound):
            await admin_client.delete(kinds.VALIDATING_WEBHOOK_CONFIGURATION, name)


async def test_the_cainjector_injects_the_certificates_ca_into_a_webhook_configuration(
    tls_secret: dict[str, Any], webhook_configuration: str, admin_client: Client
) -> None:
    expected = base64.b64decode(tls_secret["data"]["ca.crt"])

    async def injected() -> bool:
        current = await admin_client.get(kinds.VALIDATING_WEBHOOK_CONFIGURATION, webhook_configuration)
        bundle = current["webhooks"][0]["clientConfig"].get("caBundle")
        return bundle is not None and base64.b64decode(bundle) == expected

    await eventually(injected, what="the cainjector to inject the Certificate's CA")


async def test_starting_again_reuses_the_running_processes(cert_manager: CertManager) -> None:
    pids = cert_manager.pids
    await cert_manager.start()
    assert cert_manager.pids == pids
    cert_manager.check()
