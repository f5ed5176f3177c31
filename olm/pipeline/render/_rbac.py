"""ServiceAccounts, Roles/RoleBindings and ClusterRoles/ClusterRoleBindings from the CSV's permissions.

Names of generated roles are `unique_name("<csv>-<serviceAccount>", permission)`, the permission hashed
as Go encodes it. In AllNamespaces mode (`targets == [""]`) namespaced permissions become cluster-wide,
each gaining get/list/watch on namespaces as OLM v0 does when it lifts Roles to ClusterRoles.
"""

from __future__ import annotations

from typing import Any

from olm.pipeline.render._names import unique_name
from olm.registryv1.bundle import RegistryV1
from olm.registryv1.clusterserviceversion import Permission

__all__ = ["cluster_role_objects", "role_objects", "service_account_objects"]

_RBAC = "rbac.authorization.k8s.io"
_NAMESPACE_RULE = {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]}


def _sa_name(permission: Permission) -> str:
    return permission.service_account_name or "default"


def _all_namespaces(targets: tuple[str, ...]) -> bool:
    return targets == ("",)


def service_account_objects(rv1: RegistryV1, namespace: str) -> list[dict[str, Any]]:
    """One ServiceAccount per account the permissions name; the `default` account is never created."""
    names = dict.fromkeys(_sa_name(p) for p in (*rv1.csv.permissions, *rv1.csv.cluster_permissions))
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}
        for name in names
        if name != "default"
    ]


def _binding(kind: str, name: str, namespace: str, sa: str, install_namespace: str) -> dict[str, Any]:
    metadata = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {
        "apiVersion": f"{_RBAC}/v1",
        "kind": f"{kind}Binding",
        "metadata": metadata,
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": install_namespace}],
        "roleRef": {"apiGroup": _RBAC, "kind": kind, "name": name},
    }


def _rules(permission: Permission) -> list[dict[str, Any]] | None:
    return None if permission.rules is None else [dict(rule) for rule in permission.rules]


def role_objects(rv1: RegistryV1, install_namespace: str, targets: tuple[str, ...]) -> list[dict[str, Any]]:
    """A Role and RoleBinding per target namespace and permission (none in AllNamespaces mode)."""
    if _all_namespaces(targets):
        return []
    out = []
    for ns in targets:
        for permission in rv1.csv.permissions:
            sa = _sa_name(permission)
            name = unique_name(f"{rv1.csv.name}-{sa}", permission.go_value())
            role = {
                "apiVersion": f"{_RBAC}/v1",
                "kind": "Role",
                "metadata": {"name": name, "namespace": ns},
                "rules": _rules(permission),
            }
            out += [role, _binding("Role", name, ns, sa, install_namespace)]
    return out


def cluster_role_objects(
    rv1: RegistryV1, install_namespace: str, targets: tuple[str, ...]
) -> list[dict[str, Any]]:
    """A ClusterRole and ClusterRoleBinding per cluster permission (plus promoted permissions)."""
    permissions = list(rv1.csv.cluster_permissions)
    if _all_namespaces(targets):
        permissions += [
            Permission(p.service_account_name, (*(p.rules or ()), dict(_NAMESPACE_RULE)))
            for p in rv1.csv.permissions
        ]
    out = []
    for permission in permissions:
        sa = _sa_name(permission)
        name = unique_name(f"{rv1.csv.name}-{sa}", permission.go_value())
        role = {
            "apiVersion": f"{_RBAC}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": _rules(permission),
        }
        out += [role, _binding("ClusterRole", name, "", sa, install_namespace)]
    return out
