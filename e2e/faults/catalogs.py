"""ClusterCatalogs for the fault drills: real catalog images pushed to a registry, created
without the webhook (so with the name label set here), waited on, and their served bytes read."""

from __future__ import annotations

import shutil
import ssl
from pathlib import Path
from typing import Any

import aiohttp

from olm.api import names
from olm_runtime import conditions
from olm_runtime.client import Client
from olm_testkit import catalogs
from olm_testkit.catalogs import cluster_catalog, serving
from olm_testkit.extensions import Extensions
from olm_testkit.images.realdata import COMMUNITY_CATALOG, FIXTURE_CATALOG, realdata


def fixture_catalog_dir() -> Path:
    """Upstream's small e2e test catalog (27 objects)."""
    return realdata() / FIXTURE_CATALOG / "v1" / "configs"


def community_subset(into: Path, packages: tuple[str, ...]) -> Path:
    """A File-Based Catalog of these community packages, copied (the real data is never edited)."""
    for package in packages:
        shutil.copytree(realdata() / COMMUNITY_CATALOG / package, into / package)
    return into


async def create_catalog(kube: Client, name: str, ref: str, *, poll_minutes: int | None = None) -> None:
    # catalogd's webhook sets the name label in a cluster; no webhook is registered here.
    await kube.create(cluster_catalog(name, ref, name_label=True, poll_minutes=poll_minutes))


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

    def reached(found: dict[str, Any]) -> bool:
        current = conditions.of(found, "Progressing")
        if current.get("reason") != progressing or message_contains not in str(current.get("message")):
            return False
        return serving_ref is None or serving(found, serving_ref)

    return await catalogs.wait_catalog(kube, name, what, reached, timeout=timeout)


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
