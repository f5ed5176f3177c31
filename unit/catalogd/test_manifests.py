"""catalogd's hand-written manifests, read as data: its RBAC is the least privilege the code needs,
and the Service and Certificate are what clients that reach a catalogd Pod by port-forward
(upstream's `kubectl operator olmv1 search`) rely on, as upstream ships it.

That the RBAC is enough, and that every verb of it is used, is proven on a real control plane by
`e2e/catalogd/test_rbac.py` (from the API server's audit log); that such a client works end to end
by `e2e/deployed/test_kubectl_operator.py`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CATALOGD = Path(__file__).resolve().parents[2] / "manifests" / "catalogd"
SYSTEM_NAMESPACE = "olmv1-system"


def _of_kind(kind: str) -> list[dict[str, Any]]:
    listed = yaml.safe_load((CATALOGD / "kustomization.yaml").read_text())["resources"]
    documents = [d for name in listed for d in yaml.safe_load_all((CATALOGD / name).read_text()) if d]
    return [d for d in documents if d["kind"] == kind]


def test_every_service_port_targets_the_container_port_of_its_name_by_number() -> None:
    (deployment,) = _of_kind("Deployment")
    (container,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "manager"]
    container_ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    (service,) = _of_kind("Service")
    targets = {p["name"]: p["targetPort"] for p in service["spec"]["ports"]}
    assert targets == {name: container_ports[name] for name in ("https", "webhook", "metrics")}


def test_the_serving_certificate_names_the_service_and_localhost() -> None:
    (service,) = _of_kind("Service")
    certificates = {c["spec"]["secretName"]: c for c in _of_kind("Certificate")}
    serving = certificates["catalogd-service-cert"]
    service_name = f"{service['metadata']['name']}.{service['metadata']['namespace']}.svc"
    assert serving["spec"]["dnsNames"] == [service_name, f"{service_name}.cluster.local", "localhost"]


def _rules(kind: str) -> list[dict[str, Any]]:
    """The rules of the one role of `kind` in rbac.yaml (metrics-rbac.yaml has its own test)."""
    (role,) = [r for r in _of_kind(kind) if not r["metadata"]["name"].startswith("catalogd-metrics-")]
    return list(role["rules"])


def test_the_cluster_role_grants_only_what_the_controller_uses() -> None:
    """No get or update of ClusterCatalogs (the cache reads them; finalizers and status are merge
    patches), no finalizers subresource (catalogd sets no owner references), Events in the new API."""
    assert _rules("ClusterRole") == [
        {
            "apiGroups": ["olm.operatorframework.io"],
            "resources": ["clustercatalogs"],
            "verbs": ["list", "watch", "patch"],
        },
        {
            "apiGroups": ["olm.operatorframework.io"],
            "resources": ["clustercatalogs/status"],
            "verbs": ["patch"],
        },
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
    ]


def test_the_role_grants_the_lease_and_the_pull_secret_by_name_in_the_system_namespace() -> None:
    """Leader election reads, creates and updates its Lease (never lists, watches, patches or deletes
    it); the pull Secret is only watched, by name."""
    (role,) = _of_kind("Role")
    assert role["metadata"]["namespace"] == SYSTEM_NAMESPACE
    assert _rules("Role") == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["olm-global-pull-secret"],
            "verbs": ["list", "watch"],
        },
    ]
    (deployment,) = _of_kind("Deployment")
    (container,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "manager"]
    assert f"--global-pull-secret={SYSTEM_NAMESPACE}/olm-global-pull-secret" in container["args"]


def test_every_rule_says_which_code_needs_it() -> None:
    """Each rule of rbac.yaml follows a comment (docs/catalogd/rbac.md has the same table)."""
    lines = (CATALOGD / "rbac.yaml").read_text().splitlines()
    uncommented = [
        number
        for number, line in enumerate(lines, start=1)
        if line.startswith("  - apiGroups:") and not lines[number - 2].lstrip().startswith("#")
    ]
    assert uncommented == []


def test_every_binding_names_the_service_account_and_one_of_its_roles() -> None:
    (account,) = _of_kind("ServiceAccount")
    subject = {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": SYSTEM_NAMESPACE}
    roles = {(d["kind"], d["metadata"]["name"]) for d in _of_kind("ClusterRole") + _of_kind("Role")}
    for binding in _of_kind("ClusterRoleBinding") + _of_kind("RoleBinding"):
        assert (binding["roleRef"]["kind"], binding["roleRef"]["name"]) in roles
        assert binding["subjects"] == [subject]
