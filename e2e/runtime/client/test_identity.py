"""Clients acting as another identity: a ServiceAccount's TokenRequest token, or impersonation."""

from __future__ import annotations

import pytest

from olm_runtime.client import Client, CredentialError, errors, kinds
from olm_runtime.testing.poll import eventually

from .conftest import can_list_config_maps, config_map, config_map_role, config_map_role_binding


async def test_service_account_client_is_forbidden_until_a_role_binding_grants_access(
    client: Client, namespace: str
) -> None:
    await client.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader", "namespace": namespace}}
    )
    await client.create(config_map(namespace, "visible"))
    reader = client.for_service_account(namespace, "reader")

    with pytest.raises(errors.Forbidden) as raised:
        await reader.list(kinds.CONFIG_MAP, namespace=namespace)
    # Authenticated as the ServiceAccount, not as the admin whose connection settings it shares.
    assert (
        f'"system:serviceaccount:{namespace}:reader" cannot list resource "configmaps"'
        in raised.value.message
    )

    await client.create(config_map_role(namespace, ["get", "list"]))
    await client.create(
        config_map_role_binding(
            namespace, [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}]
        )
    )
    await eventually(lambda: can_list_config_maps(reader, namespace), what="the RoleBinding to take effect")
    assert (await reader.get(kinds.CONFIG_MAP, "visible", namespace=namespace))["metadata"][
        "name"
    ] == "visible"
    with pytest.raises(errors.Forbidden):  # the Role grants reads only
        await reader.create(config_map(namespace, "not-allowed"))
    with pytest.raises(errors.Forbidden):  # and only in its namespace
        await reader.list(kinds.CONFIG_MAP, namespace="default")

    again = client.for_service_account(namespace, "reader")
    assert again.config.token_provider is reader.config.token_provider  # one cached token per account


async def test_service_account_that_does_not_exist_is_a_credential_error(
    client: Client, namespace: str
) -> None:
    ghost = client.for_service_account(namespace, "ghost")
    with pytest.raises(CredentialError, match=f"ServiceAccount {namespace}/ghost") as raised:
        await ghost.list(kinds.CONFIG_MAP, namespace=namespace)
    assert isinstance(raised.value.__cause__, errors.NotFound)


async def test_impersonated_client_is_forbidden_until_its_group_is_bound(
    client: Client, namespace: str
) -> None:
    alice = client.impersonating("alice", ["readers"])
    await client.create(config_map(namespace, "shared"))
    with pytest.raises(errors.Forbidden) as raised:
        await alice.get(kinds.CONFIG_MAP, "shared", namespace=namespace)
    assert 'User "alice" cannot get resource "configmaps"' in raised.value.message

    await client.create(config_map_role(namespace, ["get", "list"]))
    await client.create(
        config_map_role_binding(
            namespace, [{"kind": "Group", "name": "readers", "apiGroup": "rbac.authorization.k8s.io"}]
        )
    )
    await eventually(
        lambda: can_list_config_maps(alice, namespace), what="the group's RoleBinding to take effect"
    )
    assert (await alice.get(kinds.CONFIG_MAP, "shared", namespace=namespace))["metadata"]["name"] == "shared"
    bob = client.impersonating("bob")  # not in the group
    assert not await can_list_config_maps(bob, namespace)


async def test_impersonation_needs_the_impersonate_permission(client: Client, namespace: str) -> None:
    await client.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "plain", "namespace": namespace}}
    )
    plain = client.for_service_account(namespace, "plain")
    with pytest.raises(errors.Forbidden) as raised:
        await plain.impersonating("system:admin").list(kinds.CONFIG_MAP, namespace=namespace)
    assert "cannot impersonate" in raised.value.message
