"""The front door for the controller: support gates, then configuration, then rendering."""

from __future__ import annotations

from typing import Any

from olm.pipeline.render._certs import CertificateProvider
from olm.pipeline.render._config import parse_config
from olm.pipeline.render._errors import UnsupportedBundleError
from olm.pipeline.render._operatorcondition import with_operator_condition
from olm.pipeline.render._renderer import render
from olm.registryv1.bundle import RegistryV1
from olm.registryv1.clusterserviceversion import (
    ALL_NAMESPACES,
    OWN_NAMESPACE,
    SINGLE_NAMESPACE,
)

__all__ = ["manifests_for"]


def manifests_for(
    rv1: RegistryV1,
    install_namespace: str,
    config: Any = None,
    *,
    certificate_provider: CertificateProvider | None,
    operator_condition: bool = False,
) -> list[dict[str, Any]]:
    """The objects to install for a ClusterExtension (upstream's `RegistryV1ManifestProvider.Get`).

    Equivalent to checking the bundle is supported, `parse_config(csv, config, install_namespace)`
    and `render(rv1, install_namespace, target_namespaces=[watch], deployment_config=...,
    certificate_provider=...)`. `config` is `spec.config.inline` as decoded JSON (None when unset).
    With `operator_condition`, OLM v0's OperatorCondition contract is added (`spec.upgrade.readiness`
    other than `None`: `with_operator_condition`).
    Raises `UnsupportedBundleError`, `InvalidConfigurationError` or `RenderError`.
    """
    csv = rv1.csv
    if csv.owned_api_services:
        raise UnsupportedBundleError("unsupported bundle: apiServiceDefintions are not supported")
    if csv.webhook_definitions and certificate_provider is None:
        raise UnsupportedBundleError(
            "unsupported bundle: webhookDefinitions are not supported: certificate provider is nil"
        )
    if not csv.supported_install_modes & {ALL_NAMESPACES, SINGLE_NAMESPACE, OWN_NAMESPACE}:
        raise UnsupportedBundleError(
            "unsupported bundle: bundle must support at least one of "
            "[AllNamespaces SingleNamespace OwnNamespace] install modes"
        )
    bundle_config = parse_config(csv, config, install_namespace)
    targets = [bundle_config.watch_namespace] if bundle_config.watch_namespace is not None else None
    objects = render(
        rv1,
        install_namespace,
        target_namespaces=targets,
        deployment_config=bundle_config.deployment_config,
        certificate_provider=certificate_provider,
    )
    return with_operator_condition(objects, csv.name, install_namespace) if operator_condition else objects
