"""Each patch type and server-side apply, with field managers, conflicts and force."""

from __future__ import annotations

from typing import Any

import pytest

from olm_runtime.client import Client, PatchType, errors, kinds

from .conftest import config_map


def _deployment(namespace: str, name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {"name": "main", "image": "example.com/main:1"},
                        {"name": "sidecar", "image": "example.com/sidecar:1"},
                    ]
                },
            },
        },
    }


def _images(deployment: dict[str, Any]) -> dict[str, str]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return {c["name"]: c["image"] for c in containers}


async def test_merge_patch_merges_maps_and_deletes_null_keys(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "m", {"keep": "1", "drop": "2"}))
    patched = await client.patch(
        kinds.CONFIG_MAP, "m", {"data": {"drop": None, "new": "3"}}, namespace=namespace
    )
    assert patched["data"] == {"keep": "1", "new": "3"}


async def test_json_patch_applies_operations_in_order(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "j", {"a": "1"}))
    operations = [
        {"op": "add", "path": "/data/b", "value": "2"},
        {"op": "remove", "path": "/data/a"},
        {"op": "add", "path": "/metadata/labels", "value": {"patched": "json"}},
    ]
    patched = await client.patch(
        kinds.CONFIG_MAP, "j", operations, namespace=namespace, patch_type=PatchType.JSON
    )
    assert patched["data"] == {"b": "2"}
    assert patched["metadata"]["labels"] == {"patched": "json"}


async def test_json_patch_whose_test_operation_fails_changes_nothing(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "t", {"a": "1"}))
    operations = [
        {"op": "test", "path": "/data/a", "value": "not-1"},
        {"op": "replace", "path": "/data/a", "value": "2"},
    ]
    with pytest.raises(errors.Invalid):
        await client.patch(kinds.CONFIG_MAP, "t", operations, namespace=namespace, patch_type=PatchType.JSON)
    assert (await client.get(kinds.CONFIG_MAP, "t", namespace=namespace))["data"] == {"a": "1"}


async def test_strategic_merge_patch_merges_containers_by_name(client: Client, namespace: str) -> None:
    await client.create(_deployment(namespace, "strategic"))
    patch = {
        "spec": {
            "template": {"spec": {"containers": [{"name": "sidecar", "image": "example.com/sidecar:2"}]}}
        }
    }

    patched = await client.patch(
        kinds.DEPLOYMENT, "strategic", patch, namespace=namespace, patch_type=PatchType.STRATEGIC
    )
    assert _images(patched) == {"main": "example.com/main:1", "sidecar": "example.com/sidecar:2"}

    replaced = await client.patch(kinds.DEPLOYMENT, "strategic", patch, namespace=namespace)  # merge patch
    assert _images(replaced) == {"sidecar": "example.com/sidecar:2"}  # lists are replaced whole


async def test_strategic_merge_patch_is_rejected_for_custom_resources(
    client: Client, namespace: str, widget: Any
) -> None:
    await client.create(
        {
            "apiVersion": widget.api_version,
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": namespace},
        }
    )
    with pytest.raises(errors.APIError) as raised:
        await client.patch(
            widget, "w", {"spec": {"size": 2}}, namespace=namespace, patch_type=PatchType.STRATEGIC
        )
    assert raised.value.status == 415  # Unsupported Media Type


async def test_server_side_apply_keeps_other_managers_fields_and_reports_conflicts(
    client: Client, namespace: str
) -> None:
    alpha = {**config_map(namespace, "ssa", {"a": "1", "shared": "alpha"})}
    created = await client.apply(alpha, field_manager="alpha")
    assert created["data"] == {"a": "1", "shared": "alpha"}

    both = await client.apply(config_map(namespace, "ssa", {"b": "2"}), field_manager="beta")
    assert both["data"] == {"a": "1", "b": "2", "shared": "alpha"}  # alpha's fields survive beta's apply

    with pytest.raises(errors.Conflict) as raised:
        await client.apply(config_map(namespace, "ssa", {"b": "2", "shared": "beta"}), field_manager="beta")
    assert "conflict" in raised.value.message.lower()
    assert '"alpha"' in raised.value.message  # the server names the manager that owns the field
    assert any(cause.field == ".data.shared" for cause in raised.value.causes)

    forced = await client.apply(
        config_map(namespace, "ssa", {"b": "2", "shared": "beta"}), field_manager="beta", force=True
    )
    assert forced["data"]["shared"] == "beta"

    # alpha now owns only `a`; applying without it removes it, and beta's fields stay.
    trimmed = await client.apply(config_map(namespace, "ssa", {}), field_manager="alpha")
    assert trimmed["data"] == {"b": "2", "shared": "beta"}
    managers = {entry["manager"]: entry["operation"] for entry in trimmed["metadata"]["managedFields"]}
    assert managers.get("beta") == "Apply"


async def test_apply_needs_a_field_manager(client: Client, namespace: str) -> None:
    anonymous = Client(client.transport, mapper=client.mapper)
    with pytest.raises(ValueError, match="field manager"):
        await anonymous.apply(config_map(namespace, "nobody"))


async def test_apply_dry_run_stores_nothing(client: Client, namespace: str) -> None:
    answer = await client.apply(config_map(namespace, "dry", {"k": "v"}), dry_run=True)
    assert answer["data"] == {"k": "v"}
    with pytest.raises(errors.NotFound):
        await client.get(kinds.CONFIG_MAP, "dry", namespace=namespace)
