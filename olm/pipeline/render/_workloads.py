"""CRDs, the bundle's other manifests, and the CSV's Deployments, as installable objects."""

from __future__ import annotations

import copy
from typing import Any

from olm.compat import gotypes, k8stypes
from olm.pipeline.render._certs import CertificateProvider, CertSecretInfo, provisioner_for
from olm.pipeline.render._deploymentconfig import DeploymentConfig, apply_deployment_config
from olm.pipeline.render._errors import RenderError
from olm.pipeline.render._kinds import is_supported
from olm.registryv1.bundle import RegistryV1
from olm.registryv1.clusterserviceversion import CONVERSION, WebhookDefinition

__all__ = ["crd_objects", "deployment_objects", "other_objects"]

# Certificate volumes every webhook Deployment gets, replacing anything using the same name or path.
_CERT_VOLUMES = (
    ("webhook-cert", "/tmp/k8s-webhook-server/serving-certs", "tls.crt", "tls.key"),
    ("apiservice-cert", "/apiserver.local.config/certificates", "apiserver.crt", "apiserver.key"),
)


def crd_objects(
    rv1: RegistryV1, namespace: str, provider: CertificateProvider | None
) -> list[dict[str, Any]]:
    """The bundle's CRDs; those a conversion webhook serves get `spec.conversion` and CA injection."""
    conversions: dict[str, WebhookDefinition] = {}
    for webhook in rv1.csv.webhook_definitions:
        if webhook.type != CONVERSION:
            continue
        for crd_name in webhook.conversion_crds:
            if crd_name in conversions:
                raise RenderError(
                    f"custom resource definition '{crd_name}' is referenced by multiple conversion webhook "
                    "definitions"
                )
            conversions[crd_name] = webhook
    out = []
    for crd in rv1.crds:
        obj = copy.deepcopy(crd)
        name = obj["metadata"].get("name", "")
        conversion_webhook = conversions.get(name)
        if conversion_webhook is not None:
            if obj["spec"].get("preserveUnknownFields"):
                raise RenderError(
                    f"custom resource definition '{name}' must have .spec.preserveUnknownFields set to false "
                    "to let API Server call webhook to do the conversion"
                )
            provisioner = provisioner_for(conversion_webhook.deployment_name, namespace, provider)
            service = {
                "namespace": namespace,
                "name": provisioner.service_name,
                "path": conversion_webhook.webhook_path
                if conversion_webhook.webhook_path is not None
                else "/",
                "port": conversion_webhook.container_port or 443,
            }
            conversion: dict[str, Any] = {"clientConfig": {"service": service}}
            conversion["conversionReviewVersions"] = (
                list(conversion_webhook.admission_review_versions)
                if conversion_webhook.admission_review_versions is not None
                else None
            )
            obj["spec"]["conversion"] = {"strategy": "Webhook", "webhook": conversion}
            provisioner.inject_ca_bundle(obj)
        out.append(obj)
    return out


def other_objects(rv1: RegistryV1, namespace: str) -> list[dict[str, Any]]:
    """The bundle's other manifests; namespaced kinds move into the install namespace."""
    out = []
    for obj in rv1.others:
        supported, namespaced = is_supported(str(obj.get("kind", "")))
        if not supported:
            name = (obj.get("metadata") or {}).get("name", "")
            raise RenderError(f"bundle contains unsupported resource: Name: {name}, Kind: {obj.get('kind')}")
        copied = copy.deepcopy(obj)
        if namespaced:
            copied.setdefault("metadata", {})["namespace"] = namespace
        out.append(copied)
    return out


def deployment_objects(
    rv1: RegistryV1,
    namespace: str,
    targets: tuple[str, ...],
    provider: CertificateProvider | None,
    config: DeploymentConfig | None,
) -> list[dict[str, Any]]:
    """The CSV's Deployments with OLM's pod annotations, revisionHistoryLimit 1, certificate volumes for
    webhook Deployments and the `deploymentConfig` customisations."""
    webhook_deployments = {w.deployment_name for w in rv1.csv.webhook_definitions}
    out = []
    for spec in rv1.csv.deployments:
        deployment_spec = copy.deepcopy(spec.spec)
        template = deployment_spec.setdefault("template", {})
        template_meta = template.setdefault("metadata", {})
        annotations = {**rv1.csv.annotations, **(template_meta.get("annotations") or {})}
        annotations["olm.targetNamespaces"] = ",".join(targets)
        annotations["olm.operatorNamespace"] = namespace
        template_meta["annotations"] = annotations
        deployment_spec["revisionHistoryLimit"] = 1
        metadata: dict[str, Any] = {"name": spec.name, "namespace": namespace}
        if spec.label:
            metadata["labels"] = dict(spec.label)
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": metadata,
            "spec": deployment_spec,
        }
        secret = provisioner_for(spec.name, namespace, provider).cert_secret_info()
        if spec.name in webhook_deployments and secret is not None:
            _ensure_cert_volumes(deployment_spec, secret)
        apply_deployment_config(deployment, config)
        try:
            out.append(gotypes.roundtrip(k8stypes.DEPLOYMENT, deployment))
        except gotypes.GoTypeError as err:
            raise RenderError(f"deployment {spec.name!r}: {err}") from err
    return out


def _ensure_cert_volumes(spec: dict[str, Any], secret: CertSecretInfo) -> None:
    pod = spec["template"].setdefault("spec", {})
    containers = pod.get("containers") or []
    remove = {name for name, _, _, _ in _CERT_VOLUMES}
    protected_paths = {path for _, path, _, _ in _CERT_VOLUMES}
    for container in containers:
        for mount in container.get("volumeMounts") or []:
            if mount.get("mountPath") in protected_paths:
                remove.add(mount.get("name"))
    volumes = [
        {
            "name": name,
            "secret": {
                "secretName": secret.secret_name,
                "items": [
                    {"key": secret.certificate_key, "path": cert_path},
                    {"key": secret.private_key_key, "path": key_path},
                ],
            },
        }
        for name, _, cert_path, key_path in _CERT_VOLUMES
    ]
    pod["volumes"] = [v for v in pod.get("volumes") or [] if v.get("name") not in remove] + volumes
    for container in containers:
        mounts = [m for m in container.get("volumeMounts") or [] if m.get("name") not in remove]
        container["volumeMounts"] = mounts + [
            {"name": name, "mountPath": path} for name, path, _, _ in _CERT_VOLUMES
        ]
