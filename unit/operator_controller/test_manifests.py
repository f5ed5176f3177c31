"""The hand-written operator-controller manifests, read as data: least privilege, a Deployment the
process accepts, and a kustomization that composes with catalogd's.

That the RBAC is also *enough* is proven on a real control plane by
`e2e/operator_controller/test_rbac.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from olm.operator_controller import clusterextension, main
from olm.operator_controller.clusterobjectset import IDENTITY_POLICY

EXTENSION_POLICY = clusterextension.Options.identity_policy

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
OPERATOR_CONTROLLER = MANIFESTS / "operator-controller"
CATALOGD = MANIFESTS / "catalogd"
SYSTEM_NAMESPACE = "olmv1-system"
READ_VERBS = {"get", "list", "watch"}


def _documents(directory: Path, files: Callable[[str], bool] = lambda _: True) -> list[dict[str, Any]]:
    """Every object of the kustomization in `directory` (of the `files` it lists), in its order."""
    listed = yaml.safe_load((directory / "kustomization.yaml").read_text())["resources"]
    documents: list[dict[str, Any]] = []
    for name in filter(files, listed):
        documents += [d for d in yaml.safe_load_all((directory / name).read_text()) if d]
    return documents


METRICS_RBAC = "metrics-rbac.yaml"
"""The roles of secure /metrics (checked by `test_metrics_rbac_*`), apart from the process's own RBAC."""


def _of_kind(kind: str, *, metrics_rbac: bool = False) -> list[dict[str, Any]]:
    """The objects of `kind`: those of metrics-rbac.yaml with `metrics_rbac`, else all the others."""
    documents = _documents(OPERATOR_CONTROLLER, lambda name: (name == METRICS_RBAC) == metrics_rbac)
    return [d for d in documents if d["kind"] == kind]


def _rules() -> list[pytest.ParameterSet]:
    return [
        pytest.param(rule, id=f"{role['kind']}-{'/'.join(rule['resources'])}")
        for role in _of_kind("ClusterRole") + _of_kind("Role")
        for rule in role["rules"]
    ]


def _container() -> dict[str, Any]:
    (deployment,) = _of_kind("Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


def test_the_kustomization_lists_every_manifest() -> None:
    listed = yaml.safe_load((OPERATOR_CONTROLLER / "kustomization.yaml").read_text())["resources"]
    present = {p.name for p in OPERATOR_CONTROLLER.glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(listed) == sorted(present)


def test_it_composes_with_catalogd_without_duplicate_objects() -> None:
    """Both kustomizations applied together (or listed in one) define each object once; the shared
    Namespace comes from catalogd's, and every namespaced object of ours lives in it."""
    ours = _documents(OPERATOR_CONTROLLER)
    theirs = _documents(CATALOGD)
    keys = [(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]) for d in ours + theirs]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    assert [d["metadata"]["name"] for d in theirs if d["kind"] == "Namespace"] == [SYSTEM_NAMESPACE]
    assert not [d for d in ours if d["kind"] == "Namespace"]
    cluster_scoped = {
        "ClusterRole",
        "ClusterRoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
    assert {d["metadata"].get("namespace") for d in ours if d["kind"] not in cluster_scoped} == {
        SYSTEM_NAMESPACE
    }


@pytest.mark.parametrize("rule", _rules())
def test_no_rule_grants_a_wildcard_verb_or_writes_to_a_wildcard(rule: dict[str, Any]) -> None:
    assert "*" not in rule["verbs"]
    if "*" in rule.get("apiGroups", ()) or "*" in rule.get("resources", ()):
        assert set(rule["verbs"]) <= READ_VERBS, "only reads may name every group or resource"


def test_no_rule_names_every_group_or_resource() -> None:
    """Drift detection reads as each revision's ServiceAccount, so nothing needs to read every kind."""
    for role in _of_kind("ClusterRole") + _of_kind("Role"):
        wildcard = [r for r in role["rules"] if "*" in r["apiGroups"] or "*" in r["resources"]]
        assert wildcard == [], role["metadata"]["name"]


def test_what_the_process_reads_cluster_wide() -> None:
    """The kinds the ClusterRole lets the process read, each for a code path in rbac.yaml's comments."""
    (role,) = _of_kind("ClusterRole")
    readable = {
        f"{resource}.{group or 'core'}"
        for rule in role["rules"]
        if READ_VERBS & set(rule["verbs"])
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    assert readable == {
        "clusterextensions.olm.operatorframework.io",
        "clustercatalogs.olm.operatorframework.io",
        "clusterobjectsets.olm.operatorframework.io",
        "serviceaccounts.core",
        "customresourcedefinitions.apiextensions.k8s.io",
        "operatorconditions.operators.coreos.com",
        "validatingadmissionpolicies.admissionregistration.k8s.io",
        "validatingadmissionpolicybindings.admissionregistration.k8s.io",
    }


def test_the_identity_policies_are_read_by_their_names_only() -> None:
    """The process checks that the shipped admission policies are in force; it may read no other."""
    (role,) = _of_kind("ClusterRole")
    (rule,) = [r for r in role["rules"] if "admissionregistration.k8s.io" in r["apiGroups"]]
    assert rule["verbs"] == ["get"]
    assert rule["resourceNames"] == [EXTENSION_POLICY, IDENTITY_POLICY]
    documents = _documents(OPERATOR_CONTROLLER)
    policies = [d for d in documents if d["kind"].startswith("ValidatingAdmissionPolicy")]
    assert {(d["kind"], d["metadata"]["name"]) for d in policies} == {
        (kind, name)
        for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
        for name in (EXTENSION_POLICY, IDENTITY_POLICY)
    }


def test_secrets_and_leases_are_written_only_in_the_system_namespace() -> None:
    (cluster_role,) = _of_kind("ClusterRole")
    for rule in cluster_role["rules"]:
        if {"secrets", "leases"} & set(rule["resources"]):
            raise AssertionError(f"cluster-wide rule on Secrets or Leases: {rule}")
    (role,) = _of_kind("Role")
    assert role["metadata"]["namespace"] == SYSTEM_NAMESPACE
    assert {r for rule in role["rules"] for r in rule["resources"]} == {"secrets", "leases"}


def test_the_process_may_set_blocking_owner_references_to_what_it_owns() -> None:
    """Under the OwnerReferencesPermissionEnforcement admission plugin, an ownerReference with
    blockOwnerDeletion needs `update` on the owner's finalizers, and changing the ownerReferences
    of an existing object needs `delete` on that object. The process writes two: a revision's to
    its extension (when it creates the revision) and a content Secret's to its revision (patched
    onto the Secret); the finalizers rules grant `update` and nothing more."""
    (cluster_role,) = _of_kind("ClusterRole")
    finalizers = {
        resource
        for rule in cluster_role["rules"]
        if "update" in rule["verbs"]
        for resource in rule["resources"]
        if resource.endswith("/finalizers")
    }
    assert finalizers == {"clusterextensions/finalizers", "clusterobjectsets/finalizers"}
    assert all(
        rule["verbs"] == ["update"]
        for rule in cluster_role["rules"]
        if any(r.endswith("/finalizers") for r in rule["resources"])
    )
    (role,) = _of_kind("Role")
    assert any("secrets" in rule["resources"] and "delete" in rule["verbs"] for rule in role["rules"])


def test_no_binding_grants_cluster_admin_and_every_binding_names_our_service_account() -> None:
    (account,) = _of_kind("ServiceAccount")
    subject = {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": SYSTEM_NAMESPACE}
    roles = {(d["kind"], d["metadata"]["name"]) for d in _of_kind("ClusterRole") + _of_kind("Role")}
    bindings = _of_kind("ClusterRoleBinding") + _of_kind("RoleBinding")
    assert len(bindings) == 2
    for binding in bindings:
        ref = binding["roleRef"]
        assert ref["name"] not in ("cluster-admin", "admin", "edit")
        assert (ref["kind"], ref["name"]) in roles
        assert binding["subjects"] == [subject]


def test_the_deployment_args_are_accepted_by_the_process() -> None:
    container = _container()
    assert container["command"] == ["operator-controller"]
    args = main.parser().parse_args(container["args"])
    assert args.leader_elect is True
    assert args.system_namespace == SYSTEM_NAMESPACE
    assert args.leader_election_namespace == SYSTEM_NAMESPACE
    assert args.global_pull_secret.startswith(f"{SYSTEM_NAMESPACE}/")


def test_every_directory_flag_is_a_mounted_volume() -> None:
    container = _container()
    args = main.parser().parse_args(container["args"])
    mounts = {Path(m["mountPath"]): m for m in container["volumeMounts"]}
    assert args.cache_dir in mounts
    assert not mounts[args.cache_dir].get("readOnly")
    assert mounts[args.catalogd_cas_dir]["readOnly"] is True
    assert mounts[args.pull_cas_dir]["readOnly"] is True


def test_catalogd_is_trusted_through_the_ca_of_its_certificate_and_nothing_more() -> None:
    container = _container()
    args = main.parser().parse_args(container["args"])
    (mount,) = [m for m in container["volumeMounts"] if Path(m["mountPath"]) == args.catalogd_cas_dir]
    (deployment,) = _of_kind("Deployment")
    (volume,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]]
    certificates = [d for d in _documents(CATALOGD) if d["kind"] == "Certificate"]
    (catalogd_certificate,) = [c for c in certificates if not c["spec"].get("isCA")]
    assert volume["secret"]["secretName"] == catalogd_certificate["spec"]["secretName"]
    assert volume["secret"]["items"] == [{"key": "ca.crt", "path": "ca.crt"}]


def test_the_deployment_runs_non_root_with_a_read_only_root_filesystem_and_probes() -> None:
    (deployment,) = _of_kind("Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (account,) = _of_kind("ServiceAccount")
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    container = _container()
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    args = main.parser().parse_args(container["args"])
    assert args.health_probe_bind_address == f":{ports['health']}"
    assert args.metrics_bind_address == f":{ports['metrics']}"
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}


def test_the_metrics_service_selects_the_deployment() -> None:
    (service,) = _of_kind("Service")
    (deployment,) = _of_kind("Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    # A number, as upstream's: clients that port-forward through the Service read it from here.
    container_ports = {p["name"]: p["containerPort"] for p in _container()["ports"]}
    assert [p["targetPort"] for p in service["spec"]["ports"]] == [container_ports["metrics"]]


def test_metrics_rbac_lets_the_process_review_scrapers_and_scrapers_read_metrics_only() -> None:
    (account,) = _of_kind("ServiceAccount")
    subject = {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": SYSTEM_NAMESPACE}
    roles = {r["metadata"]["name"]: r["rules"] for r in _of_kind("ClusterRole", metrics_rbac=True)}
    assert roles == {
        "operator-controller-metrics-auth-role": [
            {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
            {
                "apiGroups": ["authorization.k8s.io"],
                "resources": ["subjectaccessreviews"],
                "verbs": ["create"],
            },
        ],
        "operator-controller-metrics-reader": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
    }
    (binding,) = _of_kind("ClusterRoleBinding", metrics_rbac=True)
    assert binding["roleRef"]["name"] == "operator-controller-metrics-auth-role"
    assert binding["subjects"] == [subject]


def test_metrics_are_served_securely_with_the_mounted_certificate() -> None:
    container = _container()
    args = main.parser().parse_args(container["args"])
    assert args.metrics_secure is True
    assert args.tls_cert.parent == args.tls_key.parent
    (mount,) = [m for m in container["volumeMounts"] if Path(m["mountPath"]) == args.tls_cert.parent]
    (deployment,) = _of_kind("Deployment")
    (volume,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]]
    (certificate,) = _of_kind("Certificate")
    assert volume["secret"]["secretName"] == certificate["spec"]["secretName"]
    (service,) = _of_kind("Service")
    (port,) = service["spec"]["ports"]
    assert certificate["spec"]["dnsNames"][0] == f"{service['metadata']['name']}.{SYSTEM_NAMESPACE}.svc"
    assert port["appProtocol"] == "https"
