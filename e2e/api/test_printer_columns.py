"""`kubectl get` shows the printer columns; short names and the `olm` category resolve."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest
from kubernetes_asyncio import client

from e2e.api.conftest import PLURALS, Objects, unique_name
from e2e.api.objects import DIGEST, cluster_catalog, cluster_extension, cluster_object_set, with_
from e2e.api.test_status import condition
from olm.api import names

pytestmark = pytest.mark.e2e

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


async def _table(api_client: client.ApiClient, kind: str, name: str, *, wide: bool = False) -> dict[str, str]:
    """The API server's own table rendering of one object, as column name -> cell (`wide`: with
    the columns `kubectl get` shows only with `-o wide`)."""
    table: dict[str, Any] = await api_client.call_api(
        f"/apis/{names.GROUP}/{names.VERSION}/{PLURALS[kind]}/{name}",
        "GET",
        header_params={"Accept": TABLE},
        response_types_map={200: "object"},
        auth_settings=["BearerToken"],
        _return_http_data_only=True,
    )
    assert table["kind"] == "Table"
    (row,) = table["rows"]
    return {
        c["name"]: str(cell)
        for c, cell in zip(table["columnDefinitions"], row["cells"], strict=True)
        if wide or not c.get("priority")
    }


async def _with_status(objects: Objects, body: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    created = await objects.create(body)
    return await objects.replace_status(with_(created, ("status", status)))


async def test_cluster_extension_columns(
    objects: Objects, api_client: client.ApiClient, request: pytest.FixtureRequest
) -> None:
    status = {
        "conditions": [
            condition("Installed"),
            condition("Progressing", "False", "Blocked", "needs a change"),
        ],
        "install": {"bundle": {"name": "argocd-operator.v0.6.0", "version": "0.6.0"}},
        "update": {
            "available": {
                "name": "argocd-operator.v0.7.0",
                "version": "0.7.0",
                "catalog": "operatorhubio",
                "path": ["argocd-operator.v0.7.0"],
            },
            "held": {"name": "argocd-operator.v0.7.0", "version": "0.7.0", "heldBy": "PermissionGrowth"},
        },
    }
    ext = await _with_status(objects, cluster_extension(unique_name(request)), status)
    row = await _table(api_client, "ClusterExtension", ext["metadata"]["name"])
    assert list(row) == ["Name", "Installed Bundle", "Version", "Installed", "Progressing", "Age"]
    assert row["Installed Bundle"] == "argocd-operator.v0.6.0"
    assert row["Version"] == "0.6.0"
    assert (row["Installed"], row["Progressing"]) == ("True", "False")
    wide = await _table(api_client, "ClusterExtension", ext["metadata"]["name"], wide=True)
    assert (wide["Update"], wide["Held By"]) == ("0.7.0", "PermissionGrowth")


async def test_cluster_catalog_columns(
    objects: Objects, api_client: client.ApiClient, request: pytest.FixtureRequest
) -> None:
    status = {
        "conditions": [condition("Serving", "False", "Unavailable")],
        "resolvedSource": {"type": "Image", "image": {"ref": f"quay.io/operatorhubio/catalog@{DIGEST}"}},
        "lastUnpacked": "2025-06-01T12:00:00Z",
    }
    catalog = await _with_status(objects, cluster_catalog(unique_name(request)), status)
    row = await _table(api_client, "ClusterCatalog", catalog["metadata"]["name"])
    assert list(row) == ["Name", "LastUnpacked", "Serving", "Age"]
    assert row["Serving"] == "False"
    assert row["LastUnpacked"] not in ("", "None", "<none>")


async def test_cluster_object_set_columns(
    objects: Objects, api_client: client.ApiClient, request: pytest.FixtureRequest
) -> None:
    status = {
        "conditions": [
            condition("Available", "Unknown", "Reconciling"),
            condition("Progressing", reason="RollingOut"),
        ]
    }
    cos = await _with_status(objects, cluster_object_set(unique_name(request)), status)
    row = await _table(api_client, "ClusterObjectSet", cos["metadata"]["name"])
    assert list(row) == ["Name", "Available", "Progressing", "Age"]
    assert (row["Available"], row["Progressing"]) == ("Unknown", "True")


async def _kubectl(control_plane: Any, *args: str) -> str:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed (the table tests above cover the same columns)")
    proc = await asyncio.create_subprocess_exec(
        kubectl,
        f"--kubeconfig={control_plane.kubeconfig}",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


async def test_kubectl_get_prints_the_columns(
    objects: Objects, control_plane: Any, request: pytest.FixtureRequest
) -> None:
    status = {
        "conditions": [condition("Installed"), condition("Progressing")],
        "install": {"bundle": {"name": "argocd-operator.v0.6.0", "version": "0.6.0"}},
    }
    ext = await _with_status(objects, cluster_extension(unique_name(request)), status)
    header, line = (
        await _kubectl(control_plane, "get", "clusterextensions", ext["metadata"]["name"])
    ).splitlines()
    assert header.split() == ["NAME", "INSTALLED", "BUNDLE", "VERSION", "INSTALLED", "PROGRESSING", "AGE"]
    assert line.split()[:5] == [ext["metadata"]["name"], "argocd-operator.v0.6.0", "0.6.0", "True", "True"]
    wide = await _kubectl(control_plane, "get", "clusterextensions", ext["metadata"]["name"], "-o", "wide")
    assert wide.splitlines()[0].split() == [
        "NAME",
        "INSTALLED",
        "BUNDLE",
        "VERSION",
        "INSTALLED",
        "PROGRESSING",
        "UPDATE",
        "HELD",
        "BY",
        "AGE",
    ]


async def test_kubectl_resolves_short_names_and_the_olm_category(
    objects: Objects, control_plane: Any, request: pytest.FixtureRequest
) -> None:
    cos = await objects.create(cluster_object_set(unique_name(request, "cos")))
    catalog = await objects.create(cluster_catalog(unique_name(request, "cc")))
    ext = await objects.create(cluster_extension(unique_name(request, "ce")))
    by_short_name = await _kubectl(control_plane, "get", "cos", cos["metadata"]["name"], "-o", "name")
    assert by_short_name.strip() == f"clusterobjectset.olm.operatorframework.io/{cos['metadata']['name']}"
    everything = await _kubectl(control_plane, "get", "olm", "-o", "name")
    for kind, obj in (("clusterobjectset", cos), ("clustercatalog", catalog), ("clusterextension", ext)):
        assert f"{kind}.olm.operatorframework.io/{obj['metadata']['name']}" in everything.splitlines()
