"""Create, read, update, list and delete against the real API server, and the typed errors."""

from __future__ import annotations

import pytest

from olm_runtime.client import Client, GroupVersionKind, errors, kinds

from .conftest import config_map


async def test_create_get_update_delete_round_trip(client: Client, namespace: str) -> None:
    created = await client.create(config_map(namespace, "settings", {"a": "1"}))
    assert created["metadata"]["uid"]
    assert created["data"] == {"a": "1"}

    fetched = await client.get(kinds.CONFIG_MAP, "settings", namespace=namespace)
    assert fetched["metadata"]["uid"] == created["metadata"]["uid"]
    assert fetched["apiVersion"] == "v1"
    assert fetched["kind"] == "ConfigMap"

    fetched["data"]["b"] = "2"
    updated = await client.update(fetched)
    assert updated["data"] == {"a": "1", "b": "2"}
    assert updated["metadata"]["resourceVersion"] != fetched["metadata"]["resourceVersion"]
    managers = {entry["manager"] for entry in updated["metadata"]["managedFields"]}
    assert "e2e-admin" in managers  # the client's field manager names every write

    await client.delete(kinds.CONFIG_MAP, "settings", namespace=namespace)
    with pytest.raises(errors.NotFound):
        await client.get(kinds.CONFIG_MAP, "settings", namespace=namespace)


async def test_create_with_generate_name(client: Client, namespace: str) -> None:
    obj = config_map(namespace, "")
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "gen-"
    created = await client.create(obj)
    assert created["metadata"]["name"].startswith("gen-")


async def test_list_pages_through_every_item_and_returns_the_list_resource_version(
    client: Client, namespace: str
) -> None:
    for i in range(5):
        await client.create(config_map(namespace, f"cm-{i}", {"i": str(i)}))

    first = await client.list_page(kinds.CONFIG_MAP, namespace=namespace, limit=2)
    assert len(first.items) == 2
    assert first.continue_token

    listed = await client.list(kinds.CONFIG_MAP, namespace=namespace, page_size=2)
    names = sorted(item["metadata"]["name"] for item in listed.items)
    assert [n for n in names if n.startswith("cm-")] == [f"cm-{i}" for i in range(5)]
    assert all(item["kind"] == "ConfigMap" and item["apiVersion"] == "v1" for item in listed.items)
    assert int(listed.resource_version) > 0


async def test_list_filters_by_label_and_field_selector(client: Client, namespace: str) -> None:
    for name, tier in (("a", "web"), ("b", "web"), ("c", "db")):
        obj = config_map(namespace, name)
        obj["metadata"]["labels"] = {"tier": tier}
        await client.create(obj)

    web = await client.list(kinds.CONFIG_MAP, namespace=namespace, label_selector="tier=web")
    assert sorted(i["metadata"]["name"] for i in web.items) == ["a", "b"]
    named = await client.list(
        kinds.CONFIG_MAP, namespace=namespace, label_selector="tier", field_selector="metadata.name=c"
    )
    assert [i["metadata"]["name"] for i in named.items] == ["c"]


async def test_a_metadata_only_list_leaves_the_content_on_the_server(client: Client, namespace: str) -> None:
    for i in range(3):
        obj = config_map(namespace, f"big-{i}", {"payload": "x" * 100_000})
        obj["metadata"]["labels"] = {"size": "big"}
        await client.create(obj)

    full = await client.list(kinds.CONFIG_MAP, namespace=namespace, label_selector="size=big")
    assert all(len(item["data"]["payload"]) == 100_000 for item in full.items)
    paged = await client.list(
        kinds.CONFIG_MAP, namespace=namespace, label_selector="size=big", metadata_only=True, page_size=2
    )
    assert sorted(item["metadata"]["name"] for item in paged.items) == ["big-0", "big-1", "big-2"]
    for item, whole in zip(paged.items, full.items, strict=True):
        assert "data" not in item
        assert (item["apiVersion"], item["kind"]) == ("v1", "ConfigMap")
        assert item["metadata"]["labels"] == {"size": "big"}
        assert item["metadata"]["uid"] == whole["metadata"]["uid"]
    assert int(paged.resource_version) > 0


async def test_cluster_scoped_objects_need_no_namespace(client: Client, namespace: str) -> None:
    ns = await client.get(kinds.NAMESPACE, namespace)
    assert ns["metadata"]["name"] == namespace
    namespaces = await client.list(kinds.NAMESPACE, field_selector=f"metadata.name={namespace}")
    assert [n["metadata"]["name"] for n in namespaces.items] == [namespace]


async def test_dry_run_writes_store_nothing(client: Client, namespace: str) -> None:
    answer = await client.create(config_map(namespace, "ghost", {"k": "v"}), dry_run=True)
    assert answer["metadata"]["name"] == "ghost"  # the server admitted and answered ...
    with pytest.raises(errors.NotFound):  # ... but stored nothing
        await client.get(kinds.CONFIG_MAP, "ghost", namespace=namespace)

    await client.create(config_map(namespace, "real", {"k": "v"}))
    dry_client = Client(client.transport, mapper=client.mapper, field_manager="e2e-admin", dry_run=True)
    await dry_client.patch(kinds.CONFIG_MAP, "real", {"data": {"k": "changed"}}, namespace=namespace)
    await dry_client.delete(kinds.CONFIG_MAP, "real", namespace=namespace)
    stored = await client.get(kinds.CONFIG_MAP, "real", namespace=namespace)
    assert stored["data"] == {"k": "v"}


async def test_not_found_carries_the_server_message(client: Client, namespace: str) -> None:
    with pytest.raises(errors.NotFound) as raised:
        await client.get(kinds.CONFIG_MAP, "missing", namespace=namespace)
    assert raised.value.status == 404
    assert raised.value.reason == "NotFound"
    assert raised.value.message == 'configmaps "missing" not found'
    assert raised.value.details["name"] == "missing"


async def test_creating_an_existing_name_is_already_exists(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "twice"))
    with pytest.raises(errors.AlreadyExists) as raised:
        await client.create(config_map(namespace, "twice"))
    assert raised.value.status == 409
    assert "already exists" in raised.value.message


async def test_updating_a_stale_resource_version_is_conflict(client: Client, namespace: str) -> None:
    original = await client.create(config_map(namespace, "contended", {"v": "0"}))
    await client.update({**original, "data": {"v": "1"}})
    with pytest.raises(errors.Conflict) as raised:
        await client.update({**original, "data": {"v": "2"}})  # still carries the old resourceVersion
    assert not isinstance(raised.value, errors.AlreadyExists)
    assert "the object has been modified" in raised.value.message


async def test_invalid_objects_name_the_rejected_fields(
    client: Client, namespace: str, widget: GroupVersionKind
) -> None:
    bad = {
        "apiVersion": widget.api_version,
        "kind": "Widget",
        "metadata": {"name": "Not_A_Valid_Name", "namespace": namespace},
        "spec": {"size": 0},
    }
    with pytest.raises(errors.Invalid) as raised:
        await client.create(bad)
    assert raised.value.status == 422
    fields = {cause.field for cause in raised.value.causes}
    assert {"metadata.name", "spec.size"} <= fields, raised.value.causes
    assert any(c.reason == "FieldValueInvalid" for c in raised.value.causes)


async def test_delete_of_a_missing_object_is_not_found(client: Client, namespace: str) -> None:
    with pytest.raises(errors.NotFound):
        await client.delete(kinds.CONFIG_MAP, "never-was", namespace=namespace)
