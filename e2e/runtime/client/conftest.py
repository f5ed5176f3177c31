"""Fixtures for the client's e2e tests: an admin `Client` and a throwaway CRD."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from olm_runtime.client import Client, GroupVersionKind, errors, kinds, load_config
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually


@pytest.fixture
async def client(control_plane: ControlPlane) -> AsyncIterator[Client]:
    """The cluster admin, loaded from the control plane's kubeconfig."""
    config = await load_config(kubeconfig=control_plane.kubeconfig)
    async with await Client.connect(config, field_manager="e2e-admin") as admin:
        yield admin


def widget_crd(group: str, *, scope: str = "Namespaced") -> dict[str, Any]:
    """A `Widget` CRD with a status subresource and a validated spec."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "size": {"type": "integer", "minimum": 1},
                    "color": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            },
            "status": {
                "type": "object",
                "properties": {"phase": {"type": "string"}, "observed": {"type": "integer"}},
            },
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


async def install_crd(client: Client, crd: dict[str, Any]) -> GroupVersionKind:
    """Create the CRD and wait until it is served, through the client's discovery too."""
    await client.create(crd)
    await settle.crd_served(client, crd["metadata"]["name"])
    return GroupVersionKind(crd["spec"]["group"], "v1", crd["spec"]["names"]["kind"])


@pytest.fixture
async def widget(client: Client) -> AsyncIterator[GroupVersionKind]:
    """A namespaced Widget kind in a group unique to the test; yields its GroupVersionKind."""
    crd = widget_crd(f"g{uuid.uuid4().hex[:8]}.example.com")
    gvk = await install_crd(client, crd)
    try:
        yield gvk
    finally:
        with contextlib.suppress(errors.NotFound):
            await client.delete(kinds.CUSTOM_RESOURCE_DEFINITION, crd["metadata"]["name"])


async def config_map_absent(client: Client, namespace: str, name: str) -> bool:
    """Whether the ConfigMap `name` is not (or no longer) on the server."""
    try:
        await client.get(kinds.CONFIG_MAP, name, namespace=namespace)
    except errors.NotFound:
        return True
    return False


async def namespace_settled(client: Client, namespace: str) -> None:
    """Wait for the kube-root-ca.crt ConfigMap the controller-manager adds to every new namespace at
    a moment of its own; listed before it lands, it would show up later as a watch event, or as a
    difference between a cache and the server."""

    async def present() -> bool:
        return not await config_map_absent(client, namespace, "kube-root-ca.crt")

    await eventually(present, what=f"namespace {namespace}'s kube-root-ca.crt ConfigMap")


def config_map(namespace: str, name: str, data: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data or {},
    }


def config_map_role(namespace: str, verbs: list[str]) -> dict[str, Any]:
    """The Role `configmap-reader`: `verbs` on ConfigMaps of `namespace`."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "configmap-reader", "namespace": namespace},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}],
    }


def config_map_role_binding(namespace: str, subjects: list[dict[str, str]]) -> dict[str, Any]:
    """`configmap-reader` bound to `subjects`."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "configmap-reader", "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "configmap-reader"},
        "subjects": subjects,
    }


async def can_list_config_maps(client: Client, namespace: str) -> bool:
    try:
        await client.list(kinds.CONFIG_MAP, namespace=namespace)
    except errors.Forbidden:
        return False
    return True
