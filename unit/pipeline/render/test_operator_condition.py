"""OLM v0's OperatorCondition contract added to real bundles (`spec.upgrade.readiness`): the object,
the variable in every container, and a Role on that one object for the Deployments' accounts."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.pipeline import render
from olm.pipeline.preflight import growth
from unit import realdata

NS = "ops"


def rendered(package: str, version: str, *, operator_condition: bool) -> list[dict[str, Any]]:
    realdata.require()
    return render.manifests_for(
        realdata.real_bundle(package, version),
        NS,
        None,
        certificate_provider=render.CertManagerProvider(),
        operator_condition=operator_condition,
    )


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


@pytest.mark.parametrize(("package", "version"), [("kube-green", "0.7.0"), ("argocd-operator", "0.17.0")])
def test_the_contract_is_added_and_nothing_else_changes(package: str, version: str) -> None:
    plain = rendered(package, version, operator_condition=False)
    withc = rendered(package, version, operator_condition=True)
    csv = realdata.real_bundle(package, version).csv.name
    deployments = of_kind(withc, "Deployment")
    assert deployments

    # Every container of every Deployment names the condition, as OLM v0 injects it.
    for deployment in deployments:
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            assert container["env"][-1] == {"name": "OPERATOR_CONDITION_NAME", "value": csv}
    # Without the variable, the Deployments and everything else are exactly upstream's rendering.
    stripped = copy.deepcopy(withc[: len(plain)])
    for deployment in of_kind(stripped, "Deployment"):
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            container["env"] = [e for e in container["env"] if e["name"] != "OPERATOR_CONDITION_NAME"]
            if not container["env"]:
                del container["env"]
    assert stripped == plain

    condition, role, binding = withc[len(plain) :]
    accounts = sorted(
        {d["spec"]["template"]["spec"].get("serviceAccountName") or "default" for d in deployments}
    )
    assert condition == {
        "apiVersion": "operators.coreos.com/v2",
        "kind": "OperatorCondition",
        "metadata": {"name": csv, "namespace": NS},
        "spec": {
            "deployments": sorted(d["metadata"]["name"] for d in deployments),
            "serviceAccounts": accounts,
        },
    }
    # The Role reaches that one object, and nothing else.
    assert role["metadata"] == {"name": csv, "namespace": NS}
    assert role["rules"] == [
        {
            "apiGroups": ["operators.coreos.com"],
            "resources": ["operatorconditions"],
            "resourceNames": [csv],
            "verbs": ["get", "update", "patch"],
        }
    ]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": csv}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": a, "namespace": NS} for a in accounts]


def test_a_variable_the_bundle_already_sets_is_replaced_not_repeated() -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": NS},
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": "op",
                    "containers": [
                        {
                            "name": "a",
                            "env": [{"name": "OPERATOR_CONDITION_NAME", "value": "stale"}, {"name": "X"}],
                        },
                        {"name": "b"},
                    ],
                }
            }
        },
    }
    objects = render.with_operator_condition([deployment], "x.v1", NS)
    containers = objects[0]["spec"]["template"]["spec"]["containers"]
    assert containers[0]["env"] == [{"name": "X"}, {"name": "OPERATOR_CONDITION_NAME", "value": "x.v1"}]
    assert containers[1]["env"] == [{"name": "OPERATOR_CONDITION_NAME", "value": "x.v1"}]
    assert [o["kind"] for o in objects] == ["Deployment", "OperatorCondition", "Role", "RoleBinding"]


def test_the_contract_role_is_not_permission_growth_between_versions() -> None:
    # Each version's Role names its own condition; the permission-growth gate must not hold that.
    for package, old, new in (("kube-green", "0.7.0", "0.7.1"), ("infinispan", "2.3.0", "2.3.1")):
        plain = growth.added_permissions(
            rendered(package, new, operator_condition=False), rendered(package, old, operator_condition=False)
        )
        withc = growth.added_permissions(
            rendered(package, new, operator_condition=True), rendered(package, old, operator_condition=True)
        )
        assert withc == plain


def test_only_a_role_on_the_condition_of_its_own_name_is_the_contract_role() -> None:
    contract = of_kind(rendered("kube-green", "0.7.0", operator_condition=True), "Role")[-1]
    assert render.is_operator_condition_role(contract)
    wider = copy.deepcopy(contract)
    wider["rules"][0]["verbs"].append("delete")
    other_name = copy.deepcopy(contract)
    other_name["metadata"]["name"] = "else"
    as_cluster_role = {**copy.deepcopy(contract), "kind": "ClusterRole"}
    for role in (wider, other_name, as_cluster_role):
        assert not render.is_operator_condition_role(role)
