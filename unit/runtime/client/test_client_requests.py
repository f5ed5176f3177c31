"""What the client puts on the wire for each call: method, path, query, content type and body.

The Kubernetes semantics of these calls are tested against the real API server in e2e/; here a stub
records requests, so the shape of each one is pinned exactly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web

from olm_runtime.client import (
    Client,
    GroupVersionKind,
    GroupVersionResource,
    PatchType,
    Preconditions,
    PropagationPolicy,
    ResourceInfo,
    RestConfig,
    WatchEvent,
    errors,
    kinds,
)

from .stub import Stub, json_response

WIDGET = GroupVersionKind("example.com", "v1", "Widget")
RESOURCES = [
    ResourceInfo(kinds.CONFIG_MAP, GroupVersionResource("", "v1", "configmaps"), namespaced=True),
    ResourceInfo(kinds.NAMESPACE, GroupVersionResource("", "v1", "namespaces"), namespaced=False),
    ResourceInfo(WIDGET, GroupVersionResource("example.com", "v1", "widgets"), namespaced=True),
]


@pytest.fixture
async def client(stub: Stub) -> AsyncIterator[Client]:
    async with await Client.connect(RestConfig(server=stub.url), field_manager="unit") as c:
        c.mapper.add(RESOURCES)
        yield c


def _cm(name: str = "a", namespace: str | None = "ns") -> dict[str, Any]:
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}


@pytest.mark.parametrize(
    "patch_type",
    [
        pytest.param(PatchType.MERGE, id="merge"),
        pytest.param(PatchType.JSON, id="json"),
        pytest.param(PatchType.STRATEGIC, id="strategic"),
    ],
)
async def test_patch_sends_its_content_type(client: Client, stub: Stub, patch_type: PatchType) -> None:
    stub.respond(json_response(b"{}"))
    body: Any = (
        [{"op": "add", "path": "/data/x", "value": "1"}] if patch_type is PatchType.JSON else {"data": {}}
    )
    await client.patch(kinds.CONFIG_MAP, "a", body, namespace="ns", patch_type=patch_type)
    sent = stub.requests[0]
    assert (sent.method, sent.path) == ("PATCH", "/api/v1/namespaces/ns/configmaps/a")
    assert sent.headers["Content-Type"] == patch_type.value
    assert orjson.loads(sent.body) == body
    assert sent.query == {"fieldManager": "unit"}


async def test_apply_is_an_apply_patch_with_manager_and_force(client: Client, stub: Stub) -> None:
    stub.respond(json_response(b"{}"))
    await client.apply(_cm(), field_manager="owner", force=True)
    await client.apply(_cm(), subresource="status")
    first, second = stub.requests
    assert first.headers["Content-Type"] == "application/apply-patch+yaml"
    assert first.query == {"fieldManager": "owner", "force": "true"}
    assert orjson.loads(first.body) == _cm()
    assert second.path == "/api/v1/namespaces/ns/configmaps/a/status"
    assert second.query == {"fieldManager": "unit", "force": "false"}


async def test_writes_carry_dry_run(client: Client, stub: Stub) -> None:
    stub.respond(json_response(b"{}"))
    await client.create(_cm(), dry_run=True)
    await client.update(_cm(), dry_run=True)
    await client.delete(kinds.CONFIG_MAP, "a", namespace="ns", dry_run=True)
    create, update, delete = stub.requests
    assert (create.method, create.path, create.query["dryRun"]) == (
        "POST",
        "/api/v1/namespaces/ns/configmaps",
        "All",
    )
    assert (update.method, update.path, update.query["dryRun"]) == (
        "PUT",
        "/api/v1/namespaces/ns/configmaps/a",
        "All",
    )
    assert orjson.loads(delete.body)["dryRun"] == ["All"]


async def test_delete_sends_delete_options(client: Client, stub: Stub) -> None:
    stub.respond(json_response(b'{"kind":"Status","status":"Success"}'))
    await client.delete(
        kinds.CONFIG_MAP,
        "a",
        namespace="ns",
        propagation_policy=PropagationPolicy.FOREGROUND,
        preconditions=Preconditions(uid="u-1", resource_version="7"),
        grace_period_seconds=0,
    )
    sent = stub.requests[0]
    assert sent.method == "DELETE"
    assert orjson.loads(sent.body) == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "propagationPolicy": "Foreground",
        "preconditions": {"uid": "u-1", "resourceVersion": "7"},
        "gracePeriodSeconds": 0,
    }


async def test_list_follows_continue_tokens_and_fills_in_kinds(client: Client, stub: Stub) -> None:
    stub.respond(
        json_response(
            b'{"metadata":{"resourceVersion":"10","continue":"c1"},"items":[{"metadata":{"name":"a"}}]}'
        ),
        json_response(b'{"metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"b"}}]}'),
    )
    result = await client.list(kinds.CONFIG_MAP, namespace="ns", label_selector="app=x", page_size=1)
    assert [i["metadata"]["name"] for i in result.items] == ["a", "b"]
    assert all((i["apiVersion"], i["kind"]) == ("v1", "ConfigMap") for i in result.items)
    assert result.resource_version == "10"
    assert [r.query for r in stub.requests] == [
        {"labelSelector": "app=x", "limit": "1"},
        {"labelSelector": "app=x", "limit": "1", "continue": "c1"},
    ]


async def test_list_restarts_unpaged_when_the_continue_token_expired(client: Client, stub: Stub) -> None:
    expired = b'{"kind":"Status","reason":"Expired","message":"continue token expired","code":410}'
    stub.respond(
        json_response(
            b'{"metadata":{"resourceVersion":"1","continue":"c1"},"items":[{"metadata":{"name":"a"}}]}'
        ),
        json_response(expired, status=410),
        json_response(
            b'{"metadata":{"resourceVersion":"2"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}'
        ),
    )
    result = await client.list(kinds.CONFIG_MAP, namespace="ns", page_size=1)
    assert [i["metadata"]["name"] for i in result.items] == ["a", "b"]
    assert result.resource_version == "2"
    assert stub.requests[2].query == {}


async def test_watch_parses_events_and_raises_error_events(client: Client, stub: Stub) -> None:
    async def events(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b'{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n')
        await response.write(b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}\n')
        await response.write(
            b'{"type":"ERROR","object":{"kind":"Status","reason":"Expired","message":"too old","code":410}}\n'
        )
        return response

    stub.respond(events)
    seen: list[WatchEvent] = []

    async def consume() -> None:
        async with client.watch(
            kinds.CONFIG_MAP, namespace="ns", resource_version="5", timeout_seconds=60
        ) as stream:
            async for event in stream:
                seen.append(event)

    with pytest.raises(errors.Gone, match="too old"):
        await consume()
    assert [(e.type, e.object["metadata"]) for e in seen] == [
        ("ADDED", {"name": "a"}),
        ("BOOKMARK", {"resourceVersion": "9"}),
    ]
    assert stub.requests[0].query == {
        "watch": "true",
        "resourceVersion": "5",
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "60",
    }


async def test_objects_are_addressed_by_their_own_metadata(client: Client, stub: Stub) -> None:
    stub.respond(json_response(b"{}"))
    await client.update(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "namespace": "ignored"}}
    )
    await client.create({**_cm(), "metadata": {"generateName": "x-", "namespace": "ns"}})
    assert [r.path for r in stub.requests] == ["/api/v1/namespaces/n", "/api/v1/namespaces/ns/configmaps"]
    with pytest.raises(ValueError, match=r"no metadata\.namespace"):
        await client.create(_cm(namespace=None))
    with pytest.raises(ValueError, match=r"no metadata\.name"):
        await client.update({**_cm(), "metadata": {"namespace": "ns"}})
    with pytest.raises(ValueError, match="no kind"):
        await client.create({"apiVersion": "v1", "metadata": {"name": "x"}})


async def test_identity_clients_share_the_mapper_and_change_only_identity(client: Client) -> None:
    alice = client.impersonating("alice", ["devs"])
    assert alice.mapper is client.mapper
    assert alice.config.impersonate_user == "alice"
    assert alice.config.impersonate_groups == ("devs",)
    assert alice.field_manager == "unit"
    sa = client.for_service_account("ns", "installer")
    assert sa.config.token_provider is client.for_service_account("ns", "installer").config.token_provider
    assert sa.config.token_provider is not client.for_service_account("ns", "other").config.token_provider
    await sa.close()  # a derived client does not close the shared pools
    assert not client.transport._pool.requests().closed


async def test_reads_are_never_cached_every_get_asks_the_server(client: Client, stub: Stub) -> None:
    answers = iter(
        [
            b'{"metadata":{"name":"a","resourceVersion":"1"}}',
            b'{"metadata":{"name":"a","resourceVersion":"2"}}',
        ]
    )

    async def changing(_: web.Request) -> web.StreamResponse:
        return web.Response(body=next(answers), content_type="application/json")

    stub.respond(changing)
    first = await client.get(kinds.CONFIG_MAP, "a", namespace="ns")
    second = await client.get(kinds.CONFIG_MAP, "a", namespace="ns")
    assert (first["metadata"]["resourceVersion"], second["metadata"]["resourceVersion"]) == ("1", "2")
    assert [r.path for r in stub.requests] == ["/api/v1/namespaces/ns/configmaps/a"] * 2
