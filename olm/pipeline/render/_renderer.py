"""The renderer: validators, then the generators in upstream's order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from olm.pipeline.render import _rbac, _webhooks, _workloads
from olm.pipeline.render._certs import CertificateProvider
from olm.pipeline.render._deploymentconfig import DeploymentConfig
from olm.pipeline.render._targets import (
    default_target_namespaces,
    validate_target_namespaces,
)
from olm.pipeline.render._validators import validate
from olm.registryv1.bundle import RegistryV1

__all__ = ["render"]


def render(
    rv1: RegistryV1,
    install_namespace: str,
    *,
    target_namespaces: Sequence[str] | None = None,
    deployment_config: DeploymentConfig | None = None,
    certificate_provider: CertificateProvider | None = None,
) -> list[dict[str, Any]]:
    """Render a registry+v1 bundle to plain objects (upstream's `BundleRenderer.Render`).

    `target_namespaces` defaults to all namespaces when the bundle supports AllNamespaces; an empty
    sequence also means the default. Without a `certificate_provider`, webhook objects are rendered
    without certificates (useful for inspection; `manifests_for` refuses that combination).
    Raises `RenderError` (validators, generators) or `InvalidConfigurationError` (targets).
    """
    validate(rv1)
    targets = tuple(target_namespaces) if target_namespaces else default_target_namespaces(rv1.csv)
    validate_target_namespaces(rv1.csv, install_namespace, targets)
    ns, provider = install_namespace, certificate_provider
    return [
        *_rbac.service_account_objects(rv1, ns),
        *_rbac.role_objects(rv1, ns, targets),
        *_rbac.cluster_role_objects(rv1, ns, targets),
        *_workloads.crd_objects(rv1, ns, provider),
        *_workloads.other_objects(rv1, ns),
        *_workloads.deployment_objects(rv1, ns, targets, provider, deployment_config),
        *_webhooks.webhook_configuration_objects(rv1, ns, targets, provider),
        *_webhooks.service_objects(rv1, ns, provider),
        *_webhooks.certificate_objects(rv1, ns, provider),
    ]
