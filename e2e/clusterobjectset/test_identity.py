"""Objects are written as the revision's ServiceAccount; missing identity or rights are reported."""

from __future__ import annotations

from typing import Any

from e2e.clusterobjectset.conftest import Revisions, config_map, deployment, exists, inline
from olm_runtime.client import Client, kinds
from olm_runtime.testing import settle


def role(namespace: str, resources: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "limited", "namespace": namespace},
        "rules": [
            {"apiGroups": [group], "resources": [resource], "verbs": ["*"]} for group, resource in resources
        ],
    }


async def test_without_service_account_annotations_the_revision_is_blocked(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    await revisions.create("anon", [("config", inline(config_map("anon", namespace)))], service_account=None)
    blocked = await revisions.wait_for("anon", "Progressing", "False", "Blocked")
    assert "olm.operatorframework.io/service-account-name" in blocked["message"]
    assert "olm.operatorframework.io/service-account-namespace" in blocked["message"]
    assert not await exists(admin_client, kinds.CONFIG_MAP, "anon", namespace)


async def test_forbidden_writes_are_reported_and_granting_the_role_lets_it_finish(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    await admin_client.create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "limited", "namespace": namespace},
        }
    )
    await admin_client.create(role(namespace, [("", "configmaps")]))
    await admin_client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "limited", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "limited"},
            "subjects": [{"kind": "ServiceAccount", "name": "limited", "namespace": namespace}],
        }
    )
    # Only the Deployment may be refused: wait until the authorizer has seen the ConfigMap grant.
    await settle.allowed(
        admin_client,
        settle.service_account(namespace, "limited"),
        verb="patch",
        resource="configmaps",
        namespace=namespace,
    )
    await revisions.create(
        "limited",
        [("config", inline(config_map("cfg", namespace))), ("deploy", inline(deployment("app", namespace)))],
        service_account="limited",
    )
    retrying = await revisions.wait_for("limited", "Progressing", "True", "Retrying", contains="forbidden")
    assert f"Deployment.v1.apps {namespace}/app as ServiceAccount {namespace}/limited" in retrying["message"]
    assert f'system:serviceaccount:{namespace}:limited" cannot' in retrying["message"]
    assert await exists(admin_client, kinds.CONFIG_MAP, "cfg", namespace)

    await admin_client.apply(role(namespace, [("", "configmaps"), ("apps", "deployments")]), force=True)
    await revisions.wait_for("limited", "Progressing", "True", "Succeeded")
