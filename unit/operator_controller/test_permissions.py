"""What a ServiceAccount needs to roll out objects, and how missing permissions are worded."""

from __future__ import annotations

from typing import Any, cast

import pytest

from olm.pipeline import preflight
from olm.pipeline.preflight import permissions
from olm.pipeline.preflight.permissions import MissingPermissionsError, Requirement, requirements
from olm.pipeline.render import CertManagerProvider, manifests_for
from olm_runtime.client import Client, GroupVersionKind, NoKindMatch, ResourceInfo
from olm_runtime.client.gvk import GroupVersionResource
from unit import realdata

RBAC = "rbac.authorization.k8s.io"
KNOWN = {
    ("v1", "ConfigMap"): ("configmaps", True),
    ("v1", "Service"): ("services", True),
    ("v1", "ServiceAccount"): ("serviceaccounts", True),
    ("apps/v1", "Deployment"): ("deployments", True),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): ("customresourcedefinitions", False),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"): (
        "validatingwebhookconfigurations",
        False,
    ),
    (f"{RBAC}/v1", "Role"): ("roles", True),
    (f"{RBAC}/v1", "RoleBinding"): ("rolebindings", True),
    (f"{RBAC}/v1", "ClusterRole"): ("clusterroles", False),
    (f"{RBAC}/v1", "ClusterRoleBinding"): ("clusterrolebindings", False),
}
"""What discovery of a bare cluster says: no custom resources."""


def known(api_version: str, kind: str) -> tuple[str, bool] | None:
    return KNOWN.get((api_version, kind))


def obj(
    api_version: str, kind: str, name: str, namespace: str | None = None, **fields: Any
) -> dict[str, Any]:
    metadata = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}


def on_object(namespace: str, group: str, resource: str, name: str) -> list[Requirement]:
    """The five requirements of writing one object."""
    return sorted(
        [Requirement(namespace, group, resource, name, verb) for verb in ("delete", "get", "patch", "update")]
        + [Requirement(namespace, group, resource, "", "create")]
    )


def role(namespace: str, name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return obj(f"{RBAC}/v1", "Role", name, namespace, rules=rules)


def cluster_role(name: str, rules: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return obj(f"{RBAC}/v1", "ClusterRole", name, rules=rules, **fields)


def binding(
    kind: str, name: str, ref_kind: str, ref_name: str, namespace: str | None = None
) -> dict[str, Any]:
    ref = {"apiGroup": RBAC, "kind": ref_kind, "name": ref_name}
    return obj(f"{RBAC}/v1", kind, name, namespace, roleRef=ref, subjects=[])


def test_exports() -> None:
    assert sorted(permissions.__all__) == [
        "CONCURRENCY",
        "EVERYTHING",
        "MissingPermissionsError",
        "PermissionCheckError",
        "Requirement",
        "Resources",
        "error_message",
        "missing_permissions",
        "requirements",
        "revision_requirement",
        "role_requirements",
        "unresolved_kinds",
    ]
    assert preflight.MissingPermissionsError is MissingPermissionsError


# objects ----------------------------------------------------------------------------------------


def test_a_namespaced_object_needs_its_verbs_by_name_and_create_in_its_namespace() -> None:
    assert requirements([obj("apps/v1", "Deployment", "op", "ns")], known) == on_object(
        "ns", "apps", "deployments", "op"
    )


def test_a_cluster_scoped_object_is_checked_cluster_wide_even_with_a_namespace_in_its_metadata() -> None:
    # The renderer leaves the install namespace on webhook configurations, which the API server ignores.
    webhook = obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "hook", "ns")
    assert requirements([webhook], known) == on_object(
        "", "admissionregistration.k8s.io", "validatingwebhookconfigurations", "hook"
    )


def test_requirements_are_deduplicated_and_create_is_asked_once_per_resource_and_namespace() -> None:
    objects = [
        obj("v1", "ConfigMap", "a", "ns"),
        obj("v1", "ConfigMap", "b", "ns"),
        obj("v1", "ConfigMap", "a", "ns"),
        obj("v1", "ConfigMap", "a", "other"),
    ]
    expected = set(on_object("ns", "", "configmaps", "a"))
    expected |= set(on_object("ns", "", "configmaps", "b"))
    expected |= set(on_object("other", "", "configmaps", "a"))
    assert requirements(objects, known) == sorted(expected)
    assert len(requirements(objects, known)) == 4 * 3 + 2


def test_requirements_sort_cluster_wide_first_then_by_namespace_group_resource_name_verb() -> None:
    objects = [
        obj("v1", "Service", "svc", "b"),
        obj("apps/v1", "Deployment", "op", "a"),
        obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "x.example.com"),
    ]
    result = requirements(objects, known)
    assert [r.namespace for r in result] == [""] * 5 + ["a"] * 5 + ["b"] * 5
    assert result[5:10] == [
        Requirement("a", "apps", "deployments", "", "create"),
        Requirement("a", "apps", "deployments", "op", "delete"),
        Requirement("a", "apps", "deployments", "op", "get"),
        Requirement("a", "apps", "deployments", "op", "patch"),
        Requirement("a", "apps", "deployments", "op", "update"),
    ]


def test_a_namespaced_object_without_a_namespace_is_refused() -> None:
    with pytest.raises(ValueError, match=r"ConfigMap cm is namespaced but has no metadata\.namespace"):
        requirements([obj("v1", "ConfigMap", "cm")], known)


# kinds discovery does not know ------------------------------------------------------------------


def test_unknown_kinds_are_skipped_and_listed() -> None:
    objects = [obj("cert-manager.io/v1", "Certificate", "cert", "ns"), obj("v1", "ConfigMap", "cm", "ns")]
    assert requirements(objects, known) == on_object("ns", "", "configmaps", "cm")
    assert permissions.unresolved_kinds(objects, known) == [("cert-manager.io/v1", "Certificate")]


def test_custom_resources_of_the_rollouts_own_crds_are_resolved_from_those_crds() -> None:
    crd = obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "widgets.example.com",
        spec={
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{"name": "v1alpha1"}, {"name": "v1"}],
        },
    )
    objects = [crd, obj("example.com/v1alpha1", "Widget", "w", "ns")]
    assert permissions.unresolved_kinds(objects, known) == []
    assert set(on_object("ns", "example.com", "widgets", "w")) <= set(requirements(objects, known))
    # what discovery says wins over the bundle's CRD (an upgrade that changes the scope is the CRD
    # upgrade check's business, and the installed CRD is what serves the object until then)
    cluster_scoped = {("example.com/v1alpha1", "Widget"): ("widgets", False)}
    result = requirements(objects, lambda a, k: cluster_scoped.get((a, k)) or known(a, k))
    assert set(on_object("", "example.com", "widgets", "w")) <= set(result)


# escalation -------------------------------------------------------------------------------------


def rules_of(result: list[Requirement], *exclude: list[Requirement]) -> list[Requirement]:
    skip = {r for group in exclude for r in group}
    return [r for r in result if r not in skip]


def test_a_role_needs_every_rule_it_grants_in_its_namespace_expanded_to_single_permissions() -> None:
    granted = role(
        "ns",
        "r",
        [
            {
                "apiGroups": ["", "apps"],
                "resources": ["configmaps", "deployments/scale"],
                "resourceNames": ["x", "y"],
                "verbs": ["get"],
            },
            {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list", "watch"]},
            {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},  # not valid in a Role: ignored
        ],
    )
    result = requirements([granted], known)
    assert rules_of(result, on_object("ns", RBAC, "roles", "r")) == sorted(
        [
            Requirement("ns", group, resource, name, "get")
            for group in ("", "apps")
            for resource in ("configmaps", "deployments/scale")
            for name in ("x", "y")
        ]
        + [Requirement("ns", "", "secrets", "", "list"), Requirement("ns", "", "secrets", "", "watch")]
    )


def test_a_cluster_role_needs_its_rules_cluster_wide_including_non_resource_urls() -> None:
    granted = cluster_role(
        "c",
        [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
            {"nonResourceURLs": ["/metrics", "/healthz"], "verbs": ["get"]},
        ],
    )
    result = requirements([granted], known)
    assert rules_of(result, on_object("", RBAC, "clusterroles", "c")) == [
        Requirement("", "", "", "", "get", "/healthz"),
        Requirement("", "", "", "", "get", "/metrics"),
        Requirement("", "", "pods", "", "get"),
    ]


def test_wildcards_in_rules_are_required_as_wildcards() -> None:
    granted = cluster_role("c", [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])
    result = requirements([granted], known)
    assert rules_of(result, on_object("", RBAC, "clusterroles", "c")) == [Requirement("", "*", "*", "", "*")]


def test_an_aggregated_cluster_role_needs_every_permission() -> None:
    aggregated = cluster_role(
        "agg", [], aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}
    )
    result = requirements([aggregated], known)
    assert rules_of(result, on_object("", RBAC, "clusterroles", "agg")) == [
        Requirement("", "", "", "", "*", "*"),
        Requirement("", "*", "*", "", "*"),
    ]


def test_rules_already_needed_for_objects_are_not_repeated() -> None:
    objects = [
        obj("v1", "ConfigMap", "cm", "ns"),
        role("ns", "r", [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get"]}]),
    ]
    result = requirements(objects, known)
    assert len(result) == len(set(result))
    assert rules_of(result, on_object("ns", RBAC, "roles", "r"), on_object("ns", "", "configmaps", "cm")) == [
        Requirement("ns", "", "configmaps", "", "get")
    ]


def test_bindings_need_bind_only_on_roles_outside_the_rollout() -> None:
    objects = [
        cluster_role("mine", []),
        binding("ClusterRoleBinding", "to-mine", "ClusterRole", "mine"),
        binding("ClusterRoleBinding", "to-theirs", "ClusterRole", "system:auth-delegator"),
        binding("RoleBinding", "to-cluster-role", "ClusterRole", "view", "ns"),
        binding("RoleBinding", "to-role", "Role", "reader", "ns"),
        binding("RoleBinding", "to-mine-in-ns", "ClusterRole", "mine", "ns"),
    ]
    assert [r for r in requirements(objects, known) if r.verb == "bind"] == [
        Requirement("", RBAC, "clusterroles", "system:auth-delegator", "bind"),
        Requirement("ns", RBAC, "clusterroles", "view", "bind"),
        Requirement("ns", RBAC, "roles", "reader", "bind"),
    ]


def test_a_rendered_real_bundle_needs_its_objects_and_the_rules_of_its_cluster_roles() -> None:
    rv1 = realdata.real_bundle("kube-green", "0.7.1")
    objects = manifests_for(rv1, "ns", None, certificate_provider=CertManagerProvider())
    result = requirements(objects, known)
    assert permissions.unresolved_kinds(objects, known) == [
        ("cert-manager.io/v1", "Certificate"),
        ("cert-manager.io/v1", "Issuer"),
    ]
    assert result == sorted(set(result))
    for o in objects:
        resolved = known(o["apiVersion"], o["kind"])
        if resolved is not None:
            plural, namespaced = resolved
            group = o["apiVersion"].rpartition("/")[0]
            namespace = o["metadata"]["namespace"] if namespaced else ""
            assert set(on_object(namespace, group, plural, o["metadata"]["name"])) <= set(result)
    assert Requirement("", "coordination.k8s.io", "leases", "", "watch") in result
    assert Requirement("", "kube-green.com", "sleepinfos/finalizers", "", "update") in result
    assert len(result) == 110


# the message ------------------------------------------------------------------------------------


def test_the_message_groups_verbs_per_namespace_group_resource_and_name_in_upstreams_words() -> None:
    missing = [
        Requirement("ns", "apps", "deployments", "op", "update"),
        Requirement("ns", "apps", "deployments", "op", "get"),
        Requirement("ns", "apps", "deployments", "", "create"),
        Requirement("", "apiextensions.k8s.io", "customresourcedefinitions", "w.example.com", "patch"),
        Requirement("", "", "namespaces", "", "list"),
        Requirement("", "", "", "", "get", "/metrics"),
        Requirement("", "*", "*", "", "*"),
        Requirement("ns", "", "secrets", "", "get"),
        Requirement("ns", "", "secrets", "", "*"),
    ]
    assert str(MissingPermissionsError(missing)) == (
        "pre-authorization failed: service account requires the following permissions to manage "
        "cluster extension:\n"
        '  Namespace:"" APIGroups:[*] Resources:[*] Verbs:[*]\n'
        '  Namespace:"" APIGroups:[] Resources:[namespaces] Verbs:[list]\n'
        '  Namespace:"" APIGroups:[apiextensions.k8s.io] Resources:[customresourcedefinitions] '
        "ResourceNames:[w.example.com] Verbs:[patch]\n"
        '  Namespace:"" Verbs:[get] NonResourceURLs:[/metrics]\n'
        '  Namespace:"ns" APIGroups:[] Resources:[secrets] Verbs:[*]\n'
        '  Namespace:"ns" APIGroups:[apps] Resources:[deployments] ResourceNames:[op] Verbs:[get,update]\n'
        '  Namespace:"ns" APIGroups:[apps] Resources:[deployments] Verbs:[create]'
    )


def test_the_revisions_finalizers_are_worded_as_upstream_names_them() -> None:
    """The line an installer without `update` on its revision's finalizers gets: the subresource
    in `Resources`, the revision by name, cluster-wide (ClusterObjectSets are cluster-scoped)."""
    assert permissions.lines_of([permissions.revision_requirement("green-1")]) == [
        'Namespace:"" APIGroups:[olm.operatorframework.io] Resources:[clusterobjectsets/finalizers] '
        "ResourceNames:[green-1] Verbs:[update]"
    ]


def test_the_error_carries_the_missing_requirements_sorted() -> None:
    missing = [Requirement("b", "", "x", "", "get"), Requirement("", "", "x", "", "get")]
    assert MissingPermissionsError(missing).missing == sorted(missing)


# asking the API server -----------------------------------------------------------------------------


class _Authorizer:
    """Discovery of `KNOWN`, and SubjectAccessReviews answered from a set of allowed attributes."""

    def __init__(self, allowed: set[tuple[str, ...]]) -> None:
        self.allowed = allowed
        self.reviews: list[dict[str, Any]] = []

    async def resource_for(self, gvk: GroupVersionKind) -> ResourceInfo:
        found = KNOWN.get((gvk.api_version, gvk.kind))
        if found is None:
            raise NoKindMatch(gvk)
        resource, namespaced = found
        return ResourceInfo(
            gvk, GroupVersionResource(gvk.group, gvk.version, resource), namespaced=namespaced
        )

    async def create(self, review: dict[str, Any], *, dry_run: bool) -> dict[str, Any]:
        self.reviews.append(review["spec"])
        attributes = review["spec"].get("resourceAttributes") or review["spec"].get("nonResourceAttributes")
        key = tuple(str(attributes.get(k, "")) for k in ("namespace", "group", "resource", "verb"))
        return {"status": {"allowed": key in self.allowed}}


def _rollout() -> list[dict[str, Any]]:
    return [
        obj("apps/v1", "Deployment", "op", "ns"),
        cluster_role("op", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]),
        obj(
            f"{RBAC}/v1",
            "ClusterRoleBinding",
            "op",
            roleRef={"apiGroup": RBAC, "kind": "ClusterRole", "name": "op"},
        ),
    ]


async def test_a_service_account_that_may_do_everything_is_asked_once() -> None:
    authorizer = _Authorizer({("", "*", "*", "*")})
    missing = await permissions.missing_permissions(
        cast(Client, authorizer), namespace="ns", service_account="sa", objects=_rollout(), revision="op-1"
    )
    assert missing == []
    assert authorizer.reviews == [
        {
            "user": "system:serviceaccount:ns:sa",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"],
            "resourceAttributes": {"verb": "*", "group": "*", "resource": "*"},
        }
    ]


async def test_without_everything_each_requirement_is_asked() -> None:
    authorizer = _Authorizer(set())
    objects = _rollout()
    missing = await permissions.missing_permissions(
        cast(Client, authorizer), namespace="ns", service_account="sa", objects=objects
    )
    expected = requirements(objects, known)
    assert missing == expected  # the role's rules among them: it may not escalate either
    assert Requirement("", "", "pods", "", "get") in missing
    assert permissions.EVERYTHING not in missing
    assert len(authorizer.reviews) == 1 + len(expected) + 1  # and whether it may escalate the role
