"""ClusterCatalogs for the fault drills: real catalog images pushed to a registry, created
without the webhook (so with the name label set here), waited on, and their served bytes read."""

from __future__ import annotations

import json
import shutil
import ssl
from pathlib import Path
from typing import Any

import aiohttp

from e2e.extensions import Extensions, condition
from hack.images.layout import Image
from hack.images.realdata import COMMUNITY_CATALOG, FIXTURE_CATALOG, realdata
from hack.images.registry import Reference, RegistryClient
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG
from olm_runtime.client import Client
from olm_runtime.testing.poll import eventually


def fixture_catalog_dir() -> Path:
    """Upstream's small e2e test catalog (27 objects)."""
    return realdata() / FIXTURE_CATALOG / "v1" / "configs"


def community_subset(into: Path, packages: tuple[str, ...]) -> Path:
    """A File-Based Catalog of these community packages, copied (the real data is never edited)."""
    for package in packages:
        shutil.copytree(realdata() / COMMUNITY_CATALOG / package, into / package)
    return into


def push_catalog(pusher: RegistryClient, image: Image, ref: str) -> str:
    """Push `image` (a `catalog_image`) at `ref` (host/repository:tag); its digest reference."""
    digest = pusher.push(image, Reference.parse(ref))
    return f"{ref.rsplit(':', 1)[0]}@{digest}"


async def create_catalog(kube: Client, name: str, ref: str, *, poll_minutes: int | None = None) -> None:
    image: dict[str, Any] = {"ref": ref}
    if poll_minutes is not None:
        image["pollIntervalMinutes"] = poll_minutes
    await kube.create(
        {
            "apiVersion": CLUSTER_CATALOG.api_version,
            "kind": CLUSTER_CATALOG.kind,
            # catalogd's webhook sets the name label in a cluster; no webhook is registered here.
            "metadata": {"name": name, "labels": {names.METADATA_NAME_LABEL: name}},
            "spec": {"source": {"type": "Image", "image": image}},
        }
    )


async def wait_catalog(
    kube: Client,
    name: str,
    what: str,
    *,
    serving_ref: str | None = None,
    progressing: str = "Succeeded",
    message_contains: str = "",
    timeout: float = 120.0,
) -> dict[str, Any]:
    """Wait until the catalog's `Progressing` reason is `progressing` (its message containing
    `message_contains`) and, with `serving_ref`, it is Serving that digest reference."""
    found: dict[str, Any] = {}

    async def reached() -> bool:
        nonlocal found
        found = dict(await kube.get(CLUSTER_CATALOG, name))
        status = found.get("status") or {}
        current = condition(found, "Progressing")
        if current.get("reason") != progressing or message_contains not in str(current.get("message")):
            return False
        if serving_ref is None:
            return True
        resolved = ((status.get("resolvedSource") or {}).get("image") or {}).get("ref")
        return condition(found, "Serving").get("status") == "True" and resolved == serving_ref

    try:
        await eventually(reached, what=f"ClusterCatalog {name}: {what}", timeout=timeout)
    except AssertionError as error:
        raise AssertionError(f"{error}; last status: {json.dumps(found.get('status'), indent=1)}") from None
    return found


async def served_bytes(ca_file: Path, base_url: str) -> bytes:
    """The body of `<base>/api/v1/all`, as catalogd serves it (asking for no compression)."""
    context = ssl.create_default_context(cafile=str(ca_file))
    connector = aiohttp.TCPConnector(ssl=context)
    async with (
        aiohttp.ClientSession(connector=connector, auto_decompress=False) as session,
        session.get(f"{base_url}/api/v1/all", headers={"Accept-Encoding": "identity"}) as response,
    ):
        assert response.status == 200, await response.text()
        return await response.read()


async def create_test_operator(
    extensions: Extensions, name: str, namespace: str, account: str, catalog: str
) -> None:
    """ClusterExtension `name` installing upstream's test-operator 1.0.0 from `catalog` only, as
    `account` in `namespace`, with `SelfCertified` upgrades."""
    await extensions.create(
        name,
        "test",
        namespace,
        account,
        version="1.0.0",
        selector={"matchLabels": {names.METADATA_NAME_LABEL: catalog}},
        upgrade_policy="SelfCertified",
    )
