"""Objects are written as the revision's ServiceAccount; missing identity or rights are reported."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from e2e.clusterobjectset.conftest import Revisions, config_map, deployment, exists, inline
from olm.api import names
from olm_runtime.client import Client, errors, kinds
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


@contextlib.asynccontextmanager
async def revision_finalizers(
    client: Client, namespace: str, account: str, revision: str
) -> AsyncIterator[None]:
    """`account` may update the finalizers of `revision`, in effect when entered: every object is
    written with a blockOwnerDeletion ownerReference to its revision, which the control plane's
    OwnerReferencesPermissionEnforcement admission plugin admits only with this grant."""
    name = f"{namespace}-{account}-finalizers"
    rule = {"apiGroups": [names.GROUP], "resources": ["clusterobjectsets/finalizers"], "verbs": ["update"]}
    await client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{**rule, "resourceNames": [revision]}],
        }
    )
    await client.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        }
    )
    try:
        await settle.allowed(
            client,
            settle.service_account(namespace, account),
            verb="update",
            group=names.GROUP,
            resource="clusterobjectsets",
            subresource="finalizers",
            name=revision,
        )
        yield
    finally:
        for gvk in (kinds.CLUSTER_ROLE_BINDING, kinds.CLUSTER_ROLE):
            with contextlib.suppress(errors.NotFound):
                await client.delete(gvk, name)


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
    async with revision_finalizers(admin_client, namespace, "limited", revisions.name("limited")):
        await revisions.create(
            "limited",
            [
                ("config", inline(config_map("cfg", namespace))),
                ("deploy", inline(deployment("app", namespace))),
            ],
            service_account="limited",
        )
        retrying = await revisions.wait_for(
            "limited", "Progressing", "True", "Retrying", contains="forbidden"
        )
        assert (
            f"Deployment.v1.apps {namespace}/app as ServiceAccount {namespace}/limited" in retrying["message"]
        )
        assert f'system:serviceaccount:{namespace}:limited" cannot' in retrying["message"]
        assert await exists(admin_client, kinds.CONFIG_MAP, "cfg", namespace)

        await admin_client.apply(role(namespace, [("", "configmaps"), ("apps", "deployments")]), force=True)
        await revisions.wait_for("limited", "Progressing", "True", "Succeeded")
