"""The status subresource and other subresources (TokenRequest, scale)."""

from __future__ import annotations

from olm_runtime.client import Client, GroupVersionKind, PatchType, errors, kinds

from .conftest import config_map


def _widget(gvk: GroupVersionKind, namespace: str, name: str) -> dict[str, object]:
    return {
        "apiVersion": gvk.api_version,
        "kind": gvk.kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"size": 1},
    }


async def test_status_is_written_only_through_the_status_subresource(
    client: Client, namespace: str, widget: GroupVersionKind
) -> None:
    created = await client.create({**_widget(widget, namespace, "w"), "status": {"phase": "Ignored"}})
    assert "status" not in created  # the main resource drops status on create ...

    created["status"] = {"phase": "Ready", "observed": 1}
    created["spec"] = {"size": 99}
    updated = await client.update_status(created)
    assert updated["status"] == {"phase": "Ready", "observed": 1}
    assert updated["spec"] == {"size": 1}  # ... and the status subresource ignores spec

    patched = await client.patch_status(widget, "w", {"status": {"observed": 2}}, namespace=namespace)
    assert patched["status"] == {"phase": "Ready", "observed": 2}

    patched["spec"] = {"size": 3}
    patched["status"] = {"phase": "Overwritten"}
    main = await client.update(patched)
    assert main["spec"] == {"size": 3}
    assert main["status"] == {"phase": "Ready", "observed": 2}  # update of the main resource keeps status


async def test_status_can_be_server_side_applied(
    client: Client, namespace: str, widget: GroupVersionKind
) -> None:
    await client.create(_widget(widget, namespace, "applied"))
    status = {
        "apiVersion": widget.api_version,
        "kind": widget.kind,
        "metadata": {"name": "applied", "namespace": namespace},
        "status": {"phase": "Applied"},
    }
    result = await client.apply(status, field_manager="status-writer", subresource="status")
    assert result["status"] == {"phase": "Applied"}
    assert result["spec"] == {"size": 1}


async def test_token_request_through_the_generic_subresource_call(client: Client, namespace: str) -> None:
    await client.create(
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": namespace}}
    )
    request = await client.create_subresource(
        kinds.SERVICE_ACCOUNT,
        "sa",
        "token",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 600},
        },
        namespace=namespace,
    )
    assert request["kind"] == "TokenRequest"
    assert request["status"]["token"].count(".") == 2  # a JWT


async def test_scale_subresource_get_and_update(client: Client, namespace: str) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "scaled", "namespace": namespace},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "scaled"}},
            "template": {
                "metadata": {"labels": {"app": "scaled"}},
                "spec": {"containers": [{"name": "c", "image": "example.com/c:1"}]},
            },
        },
    }
    await client.create(deployment)
    scale = await client.get_subresource(kinds.DEPLOYMENT, "scaled", "scale", namespace=namespace)
    assert scale["kind"] == "Scale"
    assert scale["spec"].get("replicas", 0) == 0
    # The deployment controller writes status meanwhile: read-modify-write until no conflict, as
    # any client must with optimistic concurrency.
    for _ in range(10):
        scale["spec"]["replicas"] = 2
        try:
            await client.update_subresource(kinds.DEPLOYMENT, "scaled", "scale", scale, namespace=namespace)
            break
        except errors.Conflict:
            scale = await client.get_subresource(kinds.DEPLOYMENT, "scaled", "scale", namespace=namespace)
    assert (await client.get(kinds.DEPLOYMENT, "scaled", namespace=namespace))["spec"]["replicas"] == 2

    await client.patch(
        kinds.DEPLOYMENT, "scaled", {"spec": {"replicas": 1}}, namespace=namespace, subresource="scale",
        patch_type=PatchType.MERGE,
    )  # fmt: skip
    assert (await client.get(kinds.DEPLOYMENT, "scaled", namespace=namespace))["spec"]["replicas"] == 1


async def test_config_map_kind_is_in_discovery(client: Client, namespace: str) -> None:
    info = await client.resource_for(kinds.CONFIG_MAP)
    assert info.gvr.resource == "configmaps"
    assert info.namespaced
    assert {"get", "list", "watch", "create", "update", "patch", "delete"} <= info.verbs
    await client.create(config_map(namespace, "present"))
