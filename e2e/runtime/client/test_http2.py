"""Watches over HTTP/2: the watches of many identities share one connection to the API server."""

from __future__ import annotations

import asyncio
import functools
from contextlib import AsyncExitStack

import pytest

from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.poll import eventually

from .conftest import (
    can_list_config_maps,
    config_map,
    config_map_role,
    config_map_role_binding,
    namespace_settled,
)

READERS = 12


async def _account(client: Client, namespace: str, name: str) -> None:
    await client.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": namespace}}
    )


async def test_watches_of_many_service_accounts_share_one_http2_connection(
    client: Client, namespace: str
) -> None:
    await namespace_settled(client, namespace)
    names = [f"reader-{i}" for i in range(READERS)]
    for name in names:
        await _account(client, namespace, name)
    await client.create(config_map_role(namespace, ["list", "watch"]))
    await client.create(
        config_map_role_binding(
            namespace, [{"kind": "ServiceAccount", "name": n, "namespace": namespace} for n in names]
        )
    )
    readers = [client.for_service_account(namespace, name) for name in names]
    for reader in readers:
        await eventually(
            functools.partial(can_list_config_maps, reader, namespace), what="the RoleBinding to apply"
        )
    listed = await client.list(kinds.CONFIG_MAP, namespace=namespace)

    async with AsyncExitStack() as stack:
        streams = [
            await stack.enter_async_context(
                reader.watch(
                    kinds.CONFIG_MAP,
                    namespace=namespace,
                    resource_version=listed.resource_version,
                    allow_bookmarks=False,
                    read_timeout=60,
                )
            )
            for reader in readers
        ]
        created = await client.create(config_map(namespace, "seen-by-all"))
        firsts = await asyncio.wait_for(asyncio.gather(*(anext(s) for s in streams)), timeout=60)
        # Every identity's watch is open at once, on one connection (ServiceAccounts share the
        # TLS identity: no client certificate, a token per request).
        assert readers[0].transport.http2_connections == 1

    assert [(e.type, e.object["metadata"]["uid"]) for e in firsts] == [
        ("ADDED", created["metadata"]["uid"])
    ] * READERS


async def test_a_forbidden_watch_over_http2_raises_the_typed_error(client: Client, namespace: str) -> None:
    await _account(client, namespace, "nobody")
    nobody = client.for_service_account(namespace, "nobody")
    with pytest.raises(errors.Forbidden) as raised:
        async with nobody.watch(kinds.CONFIG_MAP, namespace=namespace) as events:
            await anext(events)
    assert f'"system:serviceaccount:{namespace}:nobody" cannot watch resource "configmaps"' in (
        raised.value.message
    )
    assert nobody.transport.http2_connections == 1  # the error came over HTTP/2
