"""Render a registry+v1 bundle to the plain Kubernetes objects OLM installs.

`manifests_for(bundle, install_namespace, config, certificate_provider=...)` is the front door the
install pipeline uses: it refuses what OLM v1 does not support (owned APIServices; webhooks without a
certificate provider; no AllNamespaces/SingleNamespace/OwnNamespace install mode), validates
`spec.config.inline` (`watchNamespace`, `deploymentConfig`) against the CSV, then calls `render`.

`render(bundle, install_namespace, target_namespaces=..., deployment_config=...,
certificate_provider=...)` runs upstream's validators (all failures reported together), then the
generators in upstream's order: ServiceAccounts; Roles/RoleBindings per target namespace;
ClusterRoles/ClusterRoleBindings (AllNamespaces promotes namespaced permissions, adding get/list/watch
on namespaces); CRDs (conversion webhooks wired and CA-injected); the bundle's other objects
(namespaced kinds moved into the install namespace); Deployments (pod annotations
`olm.targetNamespaces`, `olm.operatorNamespace` and the CSV's annotations, revisionHistoryLimit 1,
certificate volumes, `deploymentConfig`); webhook configurations; webhook Services; certificates.

`manifests_for(..., operator_condition=True)` adds OLM v0's OperatorCondition contract
(`with_operator_condition`): the OperatorCondition, `OPERATOR_CONDITION_NAME` in the Deployments'
containers, and a Role and RoleBinding for their ServiceAccounts on that one object.

Promises: output is deterministic for the same input; generated names equal upstream's
(`<csv>-<sa>` + base36 SHA-224 of the Go-encoded permission, truncated to 63 characters); objects are
plain JSON-compatible dicts in Go's encoding (the golden tests compare them with upstream's output).
Errors: `RenderError` (invalid bundle), its subclasses `UnsupportedBundleError` and
`InvalidConfigurationError` (the latter carries `reason = "InvalidConfiguration"` for the condition).
"""

from olm.pipeline.render._certs import (
    CERT_MANAGER_INJECT_CA_ANNOTATION,
    CertificateProvider,
    CertManagerProvider,
    CertSecretInfo,
    Provisioner,
)
from olm.pipeline.render._config import BundleConfig, parse_config
from olm.pipeline.render._deploymentconfig import (
    DeploymentConfig,
    apply_deployment_config,
    parse_deployment_config,
)
from olm.pipeline.render._errors import (
    InvalidConfigurationError,
    RenderError,
    UnsupportedBundleError,
)
from olm.pipeline.render._kinds import SUPPORTED_KINDS
from olm.pipeline.render._names import object_name, unique_name
from olm.pipeline.render._operatorcondition import is_operator_condition_role, with_operator_condition
from olm.pipeline.render._provider import manifests_for
from olm.pipeline.render._renderer import render
from olm.pipeline.render._targets import (
    default_target_namespaces,
    validate_target_namespaces,
)
from olm.pipeline.render._validators import VALIDATORS, validate

__all__ = [
    "CERT_MANAGER_INJECT_CA_ANNOTATION",
    "SUPPORTED_KINDS",
    "VALIDATORS",
    "BundleConfig",
    "CertManagerProvider",
    "CertSecretInfo",
    "CertificateProvider",
    "DeploymentConfig",
    "InvalidConfigurationError",
    "Provisioner",
    "RenderError",
    "UnsupportedBundleError",
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
