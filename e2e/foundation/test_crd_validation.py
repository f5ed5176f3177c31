"""CustomResourceDefinitions with CEL rules are enforced by the API server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from olm_runtime.client import Client
from olm_runtime.testing import settle


@pytest.fixture
async def widget_crd(api_client: client.ApiClient, admin_client: Client) -> AsyncIterator[str]:
    """A namespaced `Widget` CRD in a group unique to the test; yields the group."""
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    ext = client.ApiextensionsV1Api(api_client)
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
                "x-kubernetes-validations": [
                    {"rule": "self.min <= self.max", "message": "min must not exceed max"}
                ],
            }
        },
    }
    # Bodies are plain dicts, which the client serializes as-is; its stubs accept only the model classes.
    await ext.create_custom_resource_definition(
        {  # type: ignore[arg-type]
            "metadata": {"name": f"widgets.{group}"},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [
                    {"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
                ],
            },
        }
    )
    # Established is not enough: the kind answers 404, then 429 while its storage starts, a moment longer.
    await settle.crd_served(admin_client, f"widgets.{group}")
    try:
        yield group
    finally:
        await ext.delete_custom_resource_definition(f"widgets.{group}")


async def test_cel_rule_rejects_an_object_that_breaks_it(
    api_client: client.ApiClient, widget_crd: str, namespace: str
) -> None:
    custom = client.CustomObjectsApi(api_client)

    def widget(name: str, low: int, high: int) -> dict[str, object]:
        return {"apiVersion": f"{widget_crd}/v1", "kind": "Widget", "metadata": {"name": name},
                "spec": {"min": low, "max": high}}  # fmt: skip

    created = await custom.create_namespaced_custom_object(
        widget_crd, "v1", namespace, "widgets", widget("ok", 1, 2)
    )
    assert created["spec"] == {"min": 1, "max": 2}
    with pytest.raises(ApiException) as rejected:
        await custom.create_namespaced_custom_object(
            widget_crd, "v1", namespace, "widgets", widget("bad", 3, 2)
        )
    assert rejected.value.status == 422
    assert "min must not exceed max" in str(rejected.value.body)
