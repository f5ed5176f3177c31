"""Shared fixtures of the API tests: the generated CRDs installed, and a client for the three kinds.

The CRDs come from `manifests/crds/` as checked in (a unit test keeps them current with the models),
so these tests exercise exactly what users install.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from olm.api import names
from olm.api.models import COMPATIBILITY_RESOURCES, RESOURCES
from olm_runtime.client import Client, load_config
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane

CRD_DIR = Path(__file__).resolve().parents[2] / "manifests" / "crds"
PLURALS = {r.info.kind: r.info.plural for r in RESOURCES}


async def _apply_crd(ext: client.ApiextensionsV1Api, manifest: Any) -> None:
    # The client serialises plain dicts as they are; the CRDs are not worth converting to models.
    name = manifest["metadata"]["name"]
    try:
        await ext.create_custom_resource_definition(manifest)
    except ApiException as err:
        if err.status != 409:
            raise
        current = await ext.read_custom_resource_definition(name)
        manifest = {
            **manifest,
            "metadata": {**manifest["metadata"], "resourceVersion": current.metadata.resource_version},
        }
        await ext.replace_custom_resource_definition(name, manifest)


@pytest.fixture(scope="session")
async def olm_crds(api_client: client.ApiClient, control_plane: ControlPlane) -> list[str]:
    """Install (or update) the generated CRDs and wait until every kind is served."""
    ext = client.ApiextensionsV1Api(api_client)
    manifests = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(CRD_DIR.glob("*.yaml"))]
    served = {r.info.kind for r in (*RESOURCES, *COMPATIBILITY_RESOURCES)}
    assert {m["spec"]["names"]["kind"] for m in manifests} == served
    for manifest in manifests:
        await _apply_crd(ext, manifest)
    crds = [m["metadata"]["name"] for m in manifests]
    async with await Client.connect(await load_config(kubeconfig=control_plane.kubeconfig)) as kube:
        for name in crds:
            await settle.crd_served(kube, name)
    return crds


def unique_name(request: pytest.FixtureRequest, salt: str = "") -> str:
    """A DNS-1123 name starting with the test's id, unique per test and per run."""
    slug = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    digest = hashlib.sha256(f"{request.node.nodeid}/{salt}/{uuid.uuid4()}".encode()).hexdigest()[:8]
    return f"{slug}-{digest}"


def rejection(err: ApiException) -> str:
    """The message of an API error (the Status object's message, or the raw body)."""
    try:
        return str(json.loads(err.body or "")["message"])
    except (TypeError, ValueError, KeyError):
        return str(err.body)


@dataclass
class Objects:
    """Create/read/update OLM objects as raw dicts; everything created is deleted at teardown."""

    api: client.CustomObjectsApi
    created: list[tuple[str, str]] = field(default_factory=list)

    async def create(self, body: dict[str, Any]) -> dict[str, Any]:
        plural = PLURALS[body["kind"]]
        result: dict[str, Any] = await self.api.create_cluster_custom_object(
            names.GROUP, names.VERSION, plural, body
        )
        self.created.append((plural, result["metadata"]["name"]))
        return result

    async def get(self, kind: str, name: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.api.get_cluster_custom_object(
            names.GROUP, names.VERSION, PLURALS[kind], name
        )
        return result

    async def replace(self, body: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.api.replace_cluster_custom_object(
            names.GROUP, names.VERSION, PLURALS[body["kind"]], body["metadata"]["name"], body
        )
        return result

    async def replace_status(self, body: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.api.replace_cluster_custom_object_status(
            names.GROUP, names.VERSION, PLURALS[body["kind"]], body["metadata"]["name"], body
        )
        return result

    async def rejected(self, body: dict[str, Any], *, update: bool = False, status: bool = False) -> str:
        """Send `body` (create, update or status update), assert a 422 and return its message."""
        send = self.replace_status if status else self.replace if update else self.create
        with pytest.raises(ApiException) as caught:
            await send(body)
        assert caught.value.status == 422, rejection(caught.value)
        return rejection(caught.value)

    async def check(self, body: dict[str, Any], expected: str | None) -> None:
        """Create `body`: it must be admitted when `expected` is None, else rejected with that text."""
        if expected is None:
            created = await self.create(body)
            assert created["metadata"]["uid"]
        else:
            message = await self.rejected(body)
            assert expected in message, message

    async def delete_all(self) -> None:
        for plural, name in reversed(self.created):
            try:
                await self.api.delete_cluster_custom_object(names.GROUP, names.VERSION, plural, name)
            except ApiException as err:
                if err.status != 404:
                    raise


@pytest.fixture
async def objects(api_client: client.ApiClient, olm_crds: list[str]) -> AsyncIterator[Objects]:
    tracker = Objects(client.CustomObjectsApi(api_client))
    try:
        yield tracker
    finally:
        await tracker.delete_all()
