"""The checks upstream runs on a bundle before rendering it; every failure is reported at once.

Each check returns a list of messages (upstream's wording, sorted the way upstream sorts them);
`validate` joins them with newlines into one `RenderError`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from olm.pipeline.render._errors import RenderError
from olm.pipeline.render._kinds import is_supported
from olm.pipeline.render._targets import go_list
from olm.registryv1.bundle import RegistryV1
from olm.registryv1.clusterserviceversion import ALL_NAMESPACES, CONVERSION

__all__ = ["VALIDATORS", "dns1123_subdomain_errors", "validate"]

_DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*"
_DNS1123_RE = re.compile(rf"^{_DNS1123_SUBDOMAIN}$")


def dns1123_subdomain_errors(value: str) -> list[str]:
    """Kubernetes' IsDNS1123Subdomain messages for `value` (empty when valid)."""
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_RE.match(value):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
            f"for validation is '{_DNS1123_SUBDOMAIN}')"
        )
    return errs


def _duplicates(names: list[str]) -> list[str]:
    return sorted(name for name, count in Counter(names).items() if count > 1)


def check_deployment_spec_uniqueness(rv1: RegistryV1) -> list[str]:
    names = [d.name for d in rv1.csv.deployments]
    return [
        f"cluster service version contains duplicate strategy deployment spec '{n}'"
        for n in _duplicates(names)
    ]


def check_deployment_name_is_dns1123_subdomain(rv1: RegistryV1) -> list[str]:
    out = []
    for name in sorted({d.name for d in rv1.csv.deployments}):
        errs = sorted(dns1123_subdomain_errors(name))
        if errs:
            out.append(
                f"invalid cluster service version strategy deployment name '{name}': {', '.join(errs)}"
            )
    return out


def check_crd_resource_uniqueness(rv1: RegistryV1) -> list[str]:
    names = [crd["metadata"].get("name", "") for crd in rv1.crds]
    return [f"bundle contains duplicate custom resource definition '{n}'" for n in _duplicates(names)]


def check_owned_crd_existence(rv1: RegistryV1) -> list[str]:
    present = {crd["metadata"].get("name", "") for crd in rv1.crds}
    missing = sorted(set(rv1.csv.owned_crds) - present)
    return [
        f"cluster service definition references owned custom resource definition '{n}' not found in bundle"
        for n in missing
    ]


def check_package_name_not_empty(rv1: RegistryV1) -> list[str]:
    return [] if rv1.package_name else ["package name is empty"]


def check_conversion_webhook_support(rv1: RegistryV1) -> list[str]:
    names = [w.generate_name for w in rv1.csv.webhook_definitions if w.type == CONVERSION]
    modes = rv1.csv.supported_install_modes
    if not names or modes == {ALL_NAMESPACES}:
        return []
    return [
        f'bundle contains conversion webhook "{n}" and supports install modes {go_list(sorted(modes))} - '
        "conversion webhooks are only supported for bundles that only support AllNamespaces install mode"
        for n in names
    ]


def check_webhook_deployment_referential_integrity(rv1: RegistryV1) -> list[str]:
    deployments = {d.name for d in rv1.csv.deployments}
    dangling = [w for w in rv1.csv.webhook_definitions if w.deployment_name not in deployments]
    dangling.sort(key=lambda w: (w.deployment_name, w.type, w.generate_name))
    return [
        f"webhook of type '{w.type}' with name '{w.generate_name}' references non-existent deployment "
        f"'{w.deployment_name}'"
        for w in dangling
    ]


def check_webhook_name_uniqueness(rv1: RegistryV1) -> list[str]:
    keys = [(w.type, w.generate_name) for w in rv1.csv.webhook_definitions]
    dups = sorted(key for key, count in Counter(keys).items() if count > 1)
    return [f"duplicate webhook '{name}' of type '{kind}'" for kind, name in dups]


def check_webhook_name_is_dns1123_subdomain(rv1: RegistryV1) -> list[str]:
    invalid = {}
    for w in rv1.csv.webhook_definitions:
        errs = sorted(dns1123_subdomain_errors(w.generate_name))
        if errs:
            invalid[(w.type, w.generate_name)] = errs
    return [
        f"webhook of type '{kind}' has invalid name '{name}': {','.join(errs)}"
        for (kind, name), errs in sorted(invalid.items())
    ]


def check_conversion_webhook_crd_reference_uniqueness(rv1: RegistryV1) -> list[str]:
    by_crd: dict[str, list[str]] = {}
    for w in rv1.csv.webhook_definitions:
        if w.type == CONVERSION:
            for crd in w.conversion_crds:
                by_crd.setdefault(crd, []).append(w.generate_name)
    return [
        f"conversion webhooks [{','.join(sorted(hooks))}] reference same custom resource definition '{crd}'"
        for crd, hooks in sorted(by_crd.items())
        if len(hooks) > 1
    ]


def check_conversion_webhooks_reference_owned_crds(rv1: RegistryV1) -> list[str]:
    owned = set(rv1.csv.owned_crds)
    hooks = sorted(
        (w for w in rv1.csv.webhook_definitions if w.type == CONVERSION), key=lambda w: w.generate_name
    )
    return [
        f"conversion webhook '{w.generate_name}' references custom resource definition '{crd}' "
        "not owned bundle"
        for w in hooks
        for crd in sorted(w.conversion_crds)
        if crd not in owned
    ]


_FORBIDDEN_GROUPS = frozenset({"olm.operatorframework.io", "*"})
_FORBIDDEN_ADMISSION_RESOURCES = frozenset(
    {
        "*",
        "mutatingwebhookconfiguration",
        "mutatingwebhookconfigurations",
        "validatingwebhookconfiguration",
        "validatingwebhookconfigurations",
    }
)


def check_webhook_rules(rv1: RegistryV1) -> list[str]:
    out = []
    for w in rv1.csv.webhook_definitions:
        if w.type == CONVERSION:
            continue
        for rule in w.rules:
            for group in rule.get("apiGroups") or []:
                if group in _FORBIDDEN_GROUPS:
                    out.append(
                        f'webhook "{w.generate_name}" contains forbidden rule: admission webhook rules '
                        f'cannot reference API group "{group}"'
                    )
                if group == "admissionregistration.k8s.io":
                    out.extend(
                        f'webhook "{w.generate_name}" contains forbidden rule: admission webhook rules '
                        f'cannot reference resource "{resource}" for API group "{group}"'
                        for resource in rule.get("resources") or []
                        if resource.lower() in _FORBIDDEN_ADMISSION_RESOURCES
                    )
    return out


def check_object_support(rv1: RegistryV1) -> list[str]:
    out = []
    for obj in rv1.others:
        kind = str(obj.get("kind", ""))
        if not is_supported(kind)[0]:
            name = (obj.get("metadata") or {}).get("name", "")
            out.append(f'unsupported resource "{name}" with kind "{kind}"')
    return out


_COMMON = ("apiVersion", "kind", "metadata")
_TOP_LEVEL_FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset((*_COMMON, *extra))
    for kind, extra in {
        "ConfigMap": ("data", "binaryData", "immutable"),
        "Secret": ("data", "stringData", "type", "immutable"),
        "Service": ("spec", "status"),
        "ServiceAccount": ("secrets", "imagePullSecrets", "automountServiceAccountToken"),
        "Role": ("rules",),
        "ClusterRole": ("rules", "aggregationRule"),
        "RoleBinding": ("subjects", "roleRef"),
        "ClusterRoleBinding": ("subjects", "roleRef"),
        "PodDisruptionBudget": ("spec", "status"),
        "NetworkPolicy": ("spec", "status"),
        "PriorityClass": ("value", "globalDefault", "description", "preemptionPolicy"),
    }.items()
}


def check_builtin_object_fields(rv1: RegistryV1) -> list[str]:
    """Not upstream: built-in kinds with unknown top-level fields. The API server refuses them on
    server-side apply ("field not declared in schema"), which upstream only discovers while rolling out
    (and reports as a progress deadline); refusing them here says what is wrong at once."""
    out: list[str] = []
    for obj in rv1.others:
        known = _TOP_LEVEL_FIELDS.get(str(obj.get("kind", "")))
        if known is None:
            continue
        name = (obj.get("metadata") or {}).get("name", "")
        out.extend(
            f'{obj["kind"]} "{name}" has unknown field "{key}": the API server would reject it'
            for key in obj
            if key not in known
        )
    return out


VALIDATORS: tuple[Callable[[RegistryV1], list[str]], ...] = (
    check_deployment_spec_uniqueness,
    check_deployment_name_is_dns1123_subdomain,
    check_crd_resource_uniqueness,
    check_owned_crd_existence,
    check_package_name_not_empty,
    check_conversion_webhook_support,
    check_webhook_deployment_referential_integrity,
    check_webhook_name_uniqueness,
    check_webhook_name_is_dns1123_subdomain,
    check_conversion_webhook_crd_reference_uniqueness,
    check_conversion_webhooks_reference_owned_crds,
    check_webhook_rules,
    check_object_support,
    check_builtin_object_fields,
)


def validate(rv1: RegistryV1) -> None:
    """Run every validator; raise one RenderError listing all failures (newline-separated)."""
    errors = [message for check in VALIDATORS for message in check(rv1)]
    if errors:
        raise RenderError("\n".join(errors))
