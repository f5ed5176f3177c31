"""OLM v0's OperatorCondition contract, added to a rendered bundle (`spec.upgrade.readiness`).

Operators built with operator-lib find their condition through the `OPERATOR_CONDITION_NAME`
variable and update it with their own ServiceAccount's token, as under OLM v0. So the bundle gets:
the OperatorCondition (named after the CSV, in the install namespace, listing the Deployments and
their ServiceAccounts), the variable in every container of those Deployments, and a Role and
RoleBinding (named after the CSV, as v0 names them) that let those ServiceAccounts get, update and
patch that one object and nothing else. The objects are applied as the extension's ServiceAccount
with the rest of the revision, so the installer, not operator-controller, grants the Role.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from olm.api import names

__all__ = ["is_operator_condition_role", "with_operator_condition"]

CONDITION_NAME_ENV = names.OPERATOR_CONDITION_NAME_ENV
_RBAC = "rbac.authorization.k8s.io"


def _condition_rule(name: str) -> dict[str, Any]:
    return {
        "apiGroups": [names.OPERATOR_CONDITION_GROUP],
        "resources": ["operatorconditions"],
        "resourceNames": [name],
        "verbs": ["get", "update", "patch"],
    }


def is_operator_condition_role(obj: Mapping[str, Any]) -> bool:
    """Whether `obj` is the contract's Role: one that grants exactly the rights on the
    OperatorCondition of its own name (whoever rendered it, it reaches nothing else)."""
    if obj.get("kind") != "Role" or obj.get("apiVersion") != f"{_RBAC}/v1":
        return False
    name = (obj.get("metadata") or {}).get("name")
    return isinstance(name, str) and obj.get("rules") == [_condition_rule(name)]


def _deployments(objects: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == "Deployment" and o.get("apiVersion") == "apps/v1"]


def _inject(deployment: dict[str, Any], name: str) -> None:
    for container in deployment["spec"]["template"]["spec"].get("containers") or ():
        env = [e for e in container.get("env") or () if e.get("name") != CONDITION_NAME_ENV]
        container["env"] = [*env, {"name": CONDITION_NAME_ENV, "value": name}]


def with_operator_condition(
    objects: list[dict[str, Any]], csv_name: str, install_namespace: str
) -> list[dict[str, Any]]:
    """`objects` (the rendered bundle, changed in place) with the contract added after them."""
    deployments = _deployments(objects)
    accounts = sorted(
        {d["spec"]["template"]["spec"].get("serviceAccountName") or "default" for d in deployments}
    )
    for deployment in deployments:
        _inject(deployment, csv_name)
    metadata = {"name": csv_name, "namespace": install_namespace}
    condition = {
        "apiVersion": names.OPERATOR_CONDITION_API_VERSION,
        "kind": names.OPERATOR_CONDITION,
        "metadata": dict(metadata),
        "spec": {
            "deployments": sorted(d["metadata"]["name"] for d in deployments),
            "serviceAccounts": accounts,
        },
    }
    role = {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "Role",
        "metadata": dict(metadata),
        "rules": [_condition_rule(csv_name)],
    }
    binding = {
        "apiVersion": f"{_RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": dict(metadata),
        "subjects": [
            {"kind": "ServiceAccount", "name": sa, "namespace": install_namespace} for sa in accounts
        ],
        "roleRef": {"apiGroup": _RBAC, "kind": "Role", "name": csv_name},
    }
    return [*objects, condition, role, binding]
