"""Discovery maps kinds to resources, and finds CRDs installed after it first looked."""

from __future__ import annotations

import uuid

import pytest

from olm_runtime.client import (
    Client,
    GroupVersionKind,
    GroupVersionResource,
    NoKindMatch,
    RESTMapper,
    kinds,
)
from olm_runtime.testing.poll import eventually

from .conftest import widget_crd


async def test_built_in_kinds_map_to_resources_with_scope_and_subresources(client: Client) -> None:
    mapper = RESTMapper(client.transport)
    deployment = await mapper.resource_for(kinds.DEPLOYMENT)
    assert deployment.gvr == GroupVersionResource("apps", "v1", "deployments")
    assert deployment.namespaced
    assert {"status", "scale"} <= deployment.subresources
    namespace = await mapper.resource_for(kinds.NAMESPACE)
    assert not namespace.namespaced
    assert namespace.path(name="x") == "/api/v1/namespaces/x"
    assert await mapper.kind_for(GroupVersionResource("", "v1", "serviceaccounts")) == kinds.SERVICE_ACCOUNT
    assert "token" in (await mapper.resource_for(kinds.SERVICE_ACCOUNT)).subresources


async def test_an_unknown_kind_is_no_kind_match(client: Client) -> None:
    mapper = RESTMapper(client.transport)
    with pytest.raises(NoKindMatch):
        await mapper.resource_for(GroupVersionKind("nope.example.com", "v1", "Nothing"))
    with pytest.raises(NoKindMatch):
        await mapper.kind_for(GroupVersionResource("", "v1", "nothings"))


async def test_a_crd_created_after_the_first_lookup_is_found(client: Client) -> None:
    mapper = RESTMapper(client.transport)
    await mapper.resource_for(kinds.CONFIG_MAP)  # discovery has run and is cached
    crd = widget_crd(f"late{uuid.uuid4().hex[:8]}.example.com", scope="Cluster")
    gvk = GroupVersionKind(crd["spec"]["group"], "v1", "Widget")
    with pytest.raises(NoKindMatch):
        await mapper.resource_for(gvk)

    await client.create(crd)
    try:

        async def found() -> bool:
            try:
                await mapper.resource_for(gvk)
            except NoKindMatch:
                return False
            return True

        await eventually(found, what="the new CRD to be discovered")
        info = await mapper.resource_for(gvk)
        assert info.gvr.resource == "widgets"
        assert not info.namespaced
        assert "status" in info.subresources
        assert await mapper.kind_for(info.gvr) == gvk
    finally:
        await client.delete(kinds.CUSTOM_RESOURCE_DEFINITION, crd["metadata"]["name"])
