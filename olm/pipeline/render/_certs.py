"""Certificate providers for bundles with webhooks: cert-manager, the one OLM v1 ships with.

A provider injects the CA into webhook configurations and conversion CRDs, names the Secret the
webhook Deployment mounts, and adds the objects that make the certificate (a self-signed Issuer and
a Certificate, OLM v0's two-year rotation and 24h renewal). Names follow OLM v0:
`<deployment with dots as dashes>-service`, certificate `<service>-cert`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from olm.pipeline.render._names import object_name

__all__ = [
    "CERT_MANAGER_INJECT_CA_ANNOTATION",
    "CertManagerProvider",
    "CertSecretInfo",
    "CertificateProvider",
    "Provisioner",
    "provisioner_for",
]

CERT_MANAGER_INJECT_CA_ANNOTATION = "cert-manager.io/inject-ca-from"


@dataclass(frozen=True)
class CertSecretInfo:
    secret_name: str
    certificate_key: str
    private_key_key: str


class CertificateProvider(Protocol):
    """How webhook serving certificates are provisioned and trusted."""

    def inject_ca_bundle(self, obj: dict[str, Any], provisioner: Provisioner) -> None:
        """Mutate a webhook configuration or CRD so the API server trusts the serving certificate."""

    def additional_objects(self, provisioner: Provisioner) -> list[dict[str, Any]]:
        """Objects that create the certificate."""

    def cert_secret_info(self, provisioner: Provisioner) -> CertSecretInfo:
        """The Secret holding the serving certificate and its keys."""


@dataclass(frozen=True)
class Provisioner:
    """The names derived for one webhook Deployment, bound to a provider (which may be absent)."""

    service_name: str
    cert_name: str
    namespace: str
    provider: CertificateProvider | None

    def inject_ca_bundle(self, obj: dict[str, Any]) -> None:
        if self.provider is not None:
            self.provider.inject_ca_bundle(obj, self)

    def additional_objects(self) -> list[dict[str, Any]]:
        return [] if self.provider is None else self.provider.additional_objects(self)

    def cert_secret_info(self) -> CertSecretInfo | None:
        return None if self.provider is None else self.provider.cert_secret_info(self)


def provisioner_for(deployment: str, namespace: str, provider: CertificateProvider | None) -> Provisioner:
    service = object_name(deployment.replace(".", "-"), "service")
    return Provisioner(service, object_name(service, "cert"), namespace, provider)


_INJECTABLE = frozenset(
    {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "CustomResourceDefinition"}
)


class CertManagerProvider:
    """cert-manager: a self-signed Issuer and a Certificate per webhook Deployment; CA injection by
    the `cert-manager.io/inject-ca-from` annotation (cainjector fills the caBundle)."""

    def inject_ca_bundle(self, obj: dict[str, Any], provisioner: Provisioner) -> None:
        if obj.get("kind") in _INJECTABLE:
            metadata = obj.setdefault("metadata", {})
            annotations = dict(metadata.get("annotations") or {})
            annotations[CERT_MANAGER_INJECT_CA_ANNOTATION] = (
                f"{provisioner.namespace}/{provisioner.cert_name}"
            )
            metadata["annotations"] = annotations

    def cert_secret_info(self, provisioner: Provisioner) -> CertSecretInfo:
        return CertSecretInfo(provisioner.cert_name, "tls.crt", "tls.key")

    def additional_objects(self, provisioner: Provisioner) -> list[dict[str, Any]]:
        issuer = object_name(provisioner.cert_name, "selfsigned-issuer")
        host = f"{provisioner.service_name}.{provisioner.namespace}"
        return [
            {
                "apiVersion": "cert-manager.io/v1",
                "kind": "Issuer",
                "metadata": {"name": issuer, "namespace": provisioner.namespace},
                "spec": {"selfSigned": {}},
                "status": {},
            },
            {
                "apiVersion": "cert-manager.io/v1",
                "kind": "Certificate",
                "metadata": {"name": provisioner.cert_name, "namespace": provisioner.namespace},
                "spec": {
                    "secretName": provisioner.cert_name,
                    "commonName": host,
                    "usages": ["server auth"],
                    "dnsNames": [host, f"{host}.svc", f"{host}.svc.cluster.local"],
                    "issuerRef": {"name": issuer},
                    "duration": "17520h0m0s",
                    "renewBefore": "24h0m0s",
                },
                "status": {},
            },
        ]
