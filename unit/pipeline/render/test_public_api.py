"""The public surfaces of the unpack (registry+v1 loading) and render packages are pinned."""

from __future__ import annotations

from olm import registryv1
from olm.pipeline import render


def test_unpack_exports() -> None:
    assert sorted(registryv1.__all__) == [
        "ALL_NAMESPACES",
        "BundleError",
        "CSVError",
        "ClusterServiceVersion",
        "DeploymentSpec",
        "MULTI_NAMESPACE",
        "OWN_NAMESPACE",
        "Permission",
        "RegistryV1",
        "SINGLE_NAMESPACE",
        "WebhookDefinition",
        "load_bundle",
        "parse_bundle",
    ]


def test_render_exports() -> None:
    assert sorted(render.__all__) == [
        "BundleConfig",
        "CERT_MANAGER_INJECT_CA_ANNOTATION",
        "CertManagerProvider",
        "CertSecretInfo",
        "CertificateProvider",
        "DeploymentConfig",
        "InvalidConfigurationError",
        "Provisioner",
        "RenderError",
        "SUPPORTED_KINDS",
        "UnsupportedBundleError",
        "VALIDATORS",
        "apply_deployment_config",
        "default_target_namespaces",
        "is_operator_condition_role",
        "manifests_for",
        "object_name",
        "parse_config",
        "parse_deployment_config",
        "render",
        "unique_name",
        "validate",
        "validate_target_namespaces",
        "with_operator_condition",
    ]
    for name in render.__all__:
        assert getattr(render, name) is not None


def test_error_hierarchy() -> None:
    assert issubclass(render.InvalidConfigurationError, render.RenderError)
    assert issubclass(render.UnsupportedBundleError, render.RenderError)
    assert issubclass(render.RenderError, ValueError)
    assert issubclass(registryv1.BundleError, ValueError)
