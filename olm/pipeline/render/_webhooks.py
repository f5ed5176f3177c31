"""Admission webhook configurations, the Services in front of webhook Deployments, and certificates.

One configuration per webhook definition, named after its `generateName` without the trailing dash;
outside AllNamespaces mode a namespace selector limits it to the target namespaces. One Service per
webhook Deployment, with a port per distinct (containerPort, targetPort); the container port defaults
to 443, as the CSV API's default does.
"""

from __future__ import annotations

from typing import Any

from olm.pipeline.render._certs import CertificateProvider, provisioner_for
from olm.registryv1.bundle import RegistryV1
from olm.registryv1.clusterserviceversion import MUTATING, VALIDATING, WebhookDefinition

__all__ = ["certificate_objects", "service_objects", "webhook_configuration_objects"]

_ADMISSION = "admissionregistration.k8s.io/v1"


def _namespace_selector(targets: tuple[str, ...]) -> dict[str, Any] | None:
    if not targets or "" in targets:
        return None
    return {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(targets)}
        ]
    }


def _webhook(
    w: WebhookDefinition, name: str, service: str, namespace: str, targets: tuple[str, ...]
) -> dict[str, Any]:
    reference: dict[str, Any] = {"namespace": namespace, "name": service}
    if w.webhook_path is not None:
        reference["path"] = w.webhook_path
    reference["port"] = w.container_port or 443
    hook: dict[str, Any] = {"name": name, "clientConfig": {"service": reference}}
    if w.rules:
        hook["rules"] = [dict(rule) for rule in w.rules]
    optional = {
        "failurePolicy": w.failure_policy,
        "matchPolicy": w.match_policy,
        "namespaceSelector": _namespace_selector(targets),
        "objectSelector": w.object_selector,
        "sideEffects": w.side_effects,
        "timeoutSeconds": w.timeout_seconds,
    }
    hook.update({k: v for k, v in optional.items() if v is not None})
    versions = w.admission_review_versions
    hook["admissionReviewVersions"] = list(versions) if versions is not None else None
    if w.type == MUTATING and w.reinvocation_policy is not None:
        hook["reinvocationPolicy"] = w.reinvocation_policy
    return hook


def webhook_configuration_objects(
    rv1: RegistryV1, namespace: str, targets: tuple[str, ...], provider: CertificateProvider | None
) -> list[dict[str, Any]]:
    """Validating configurations first, then mutating ones, each in CSV order."""
    out = []
    for kind, webhook_type in (
        ("ValidatingWebhookConfiguration", VALIDATING),
        ("MutatingWebhookConfiguration", MUTATING),
    ):
        for w in rv1.csv.webhook_definitions:
            if w.type != webhook_type:
                continue
            provisioner = provisioner_for(w.deployment_name, namespace, provider)
            name = w.generate_name.removesuffix("-")
            obj = {
                "apiVersion": _ADMISSION,
                "kind": kind,
                "metadata": {"name": name, "namespace": namespace},
                "webhooks": [_webhook(w, name, provisioner.service_name, namespace, targets)],
            }
            provisioner.inject_ca_bundle(obj)
            out.append(obj)
    return out


def _port_number(target: int | str) -> int:
    if isinstance(target, int):
        return target
    return int(target) if target.isdigit() else 0


def service_objects(
    rv1: RegistryV1, namespace: str, provider: CertificateProvider | None
) -> list[dict[str, Any]]:
    """A Service per webhook Deployment, in CSV Deployment order."""
    ports: dict[str, list[tuple[int, int | str]]] = {}
    for w in rv1.csv.webhook_definitions:
        port = w.container_port if w.container_port > 0 else 443
        entry = (port, w.target_port if w.target_port is not None else port)
        if entry not in ports.setdefault(w.deployment_name, []):
            ports[w.deployment_name].append(entry)
    out = []
    for deployment in rv1.csv.deployments:
        if deployment.name not in ports:
            continue
        entries = sorted(ports[deployment.name], key=lambda e: (e[0], _port_number(e[1])))
        spec: dict[str, Any] = {
            "ports": [{"name": str(port), "port": port, "targetPort": target} for port, target in entries]
        }
        selector = (deployment.spec.get("selector") or {}).get("matchLabels")
        if selector:
            spec["selector"] = dict(selector)
        provisioner = provisioner_for(deployment.name, namespace, provider)
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": provisioner.service_name, "namespace": namespace},
            "spec": spec,
            "status": {"loadBalancer": {}},
        }
        provisioner.inject_ca_bundle(service)
        out.append(service)
    return out


def certificate_objects(
    rv1: RegistryV1, namespace: str, provider: CertificateProvider | None
) -> list[dict[str, Any]]:
    """The provider's objects (Issuer, Certificate) for each webhook Deployment."""
    out: list[dict[str, Any]] = []
    for deployment in dict.fromkeys(w.deployment_name for w in rv1.csv.webhook_definitions):
        out.extend(provisioner_for(deployment, namespace, provider).additional_objects())
    return out
