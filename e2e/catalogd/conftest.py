"""Fixtures of the catalogd e2e tests: the CRDs, catalog images, and catalogd as a real process.

`olm_testkit.processes.CatalogdProcess` runs `python -m olm.catalogd.main` against the session's control
plane with its own storage directory, serving certificate and ports; its log is printed when a
test fails. The
`catalogd` fixture is one process per test module (leader election off, webhook on, a poll minute
of one second); tests isolate themselves by unique catalog and repository names.
"""

from __future__ import annotations

import base64
import contextlib
import json
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
import yaml

from olm import fbc
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import cluster_catalog, wait_catalog, wait_serving
from olm_testkit.images.registry import RegistryClient as PushClient
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess, token_kubeconfig

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
async def catalogd(
    control_plane: ControlPlane, olm_crds: None, tmp_path_factory: pytest.TempPathFactory, kube: Client
) -> AsyncIterator[CatalogdProcess]:
    """One catalogd process for the module, with its mutating webhook registered."""
    process = CatalogdProcess(control_plane, tmp_path_factory.mktemp("catalogd"))
    async with process.running():
        yield process


async def service_account_kubeconfig(kube: Client, control_plane: ControlPlane, path: Path) -> Path:
    """Install manifests/catalogd's Namespace and RBAC for real; write a kubeconfig for its
    ServiceAccount (a one-hour token), so catalogd runs with exactly the permissions shipped."""
    for name in ("namespace.yaml", "rbac.yaml", "metrics-rbac.yaml"):
        for document in yaml.safe_load_all((REPO_ROOT / "manifests" / "catalogd" / name).read_text()):
            await kube.apply(document, field_manager="e2e-manifests", force=True)
    return await token_kubeconfig(
        kube, control_plane, namespace=names.DEFAULT_SYSTEM_NAMESPACE, name="catalogd", path=path
    )


# --- catalogs ----------------------------------------------------------------------------------


def write_catalog(directory: Path, package: str, versions: list[str]) -> Path:
    """A small valid FBC: one package, one channel `stable` with the versions in order."""
    directory.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    documents: list[dict[str, Any]] = [{"schema": "olm.package", "name": package, "defaultChannel": "stable"}]
    previous = None
    for version in versions:
        bundle = f"{package}.v{version}"
        entry: dict[str, Any] = {"name": bundle}
        if previous:
            entry["replaces"] = previous
        entries.append(entry)
        documents.append(
            {
                "schema": "olm.bundle",
                "name": bundle,
                "package": package,
                "image": f"example.com/{package}-bundle:v{version}",
                "properties": [
                    {"type": "olm.package", "value": {"packageName": package, "version": version}}
                ],
            }
        )
        previous = bundle
    documents.append({"schema": "olm.channel", "name": "stable", "package": package, "entries": entries})
    (directory / "catalog.json").write_text("\n".join(json.dumps(d) for d in documents) + "\n")
    return directory


def source_metas(directory: Path) -> list[Any]:
    return [orjson.loads(meta.blob) for meta in fbc.iter_metas(directory)]


async def fetch_all(context: ssl.SSLContext, base_url: str) -> tuple[int, list[Any]]:
    """GET `<base>/api/v1/all`: the status code and the metas (empty unless 200)."""
    connector = aiohttp.TCPConnector(ssl=context)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(f"{base_url}/api/v1/all") as response,
    ):
        if response.status != 200:
            return response.status, []
        body = await response.read()
    return 200, [orjson.loads(line) for line in body.splitlines() if line]


@dataclass
class Catalogs:
    """Creates ClusterCatalogs and waits on them; deletes what it created at teardown."""

    kube: Client
    created: list[str] = field(default_factory=list)

    async def create(self, obj: dict[str, Any]) -> None:
        await self.kube.create(obj)
        self.created.append(obj["metadata"]["name"])

    async def get(self, name: str) -> dict[str, Any]:
        return dict(await self.kube.get(CLUSTER_CATALOG, name))

    async def wait(self, name: str, what: str, check: Any, timeout: float = 60.0) -> dict[str, Any]:
        return await wait_catalog(self.kube, name, what, check, timeout=timeout)

    async def wait_serving(
        self, name: str, digest_ref: str | None = None, timeout: float = 60.0
    ) -> dict[str, Any]:
        return await wait_serving(self.kube, name, digest_ref, timeout=timeout)

    async def delete_all(self) -> None:
        """Delete what this test created and wait until catalogd removed the finalizers (it is still
        running: it lives for the module), so no catalog outlives the process that can finalize it."""
        for name in self.created:
            with contextlib.suppress(errors.NotFound):
                await self.kube.delete(CLUSTER_CATALOG, name)

        async def all_gone() -> bool:
            for name in self.created:
                try:
                    await self.kube.get(CLUSTER_CATALOG, name)
                except errors.NotFound:
                    continue
                return False
            return True

        await eventually(all_gone, what="the test's ClusterCatalogs to be finalized and deleted", timeout=30)


@pytest.fixture
async def catalogs(kube: Client) -> AsyncIterator[Catalogs]:
    helper = Catalogs(kube)
    try:
        yield helper
    finally:
        await helper.delete_all()


@dataclass(frozen=True)
class Env:
    """Everything a catalogd test touches, as one fixture."""

    catalogd: CatalogdProcess
    catalogs: Catalogs
    pusher: PushClient
    registry: Registry
    ca: ssl.SSLContext
    kube: Client
    control_plane: ControlPlane


@pytest.fixture
def env(
    catalogd: CatalogdProcess,
    catalogs: Catalogs,
    pusher: PushClient,
    registry: Registry,
    control_plane: ControlPlane,
) -> Env:
    ca = ssl.create_default_context(cafile=str(control_plane.ca_file))
    return Env(catalogd, catalogs, pusher, registry, ca, catalogs.kube, control_plane)


@pytest.fixture
async def webhook(env: Env) -> AsyncIterator[str]:
    """catalogd's webhook registered for catalogs labelled `e2e-webhook: <marker>`; the marker."""
    marker = unique("webhook")
    url = (
        f"https://127.0.0.1:{env.catalogd.ports['webhook']}/mutate-olm-operatorframework-io-v1-clustercatalog"
    )
    rule = {
        "apiGroups": [names.GROUP],
        "apiVersions": [names.VERSION],
        "operations": ["CREATE", "UPDATE"],
        "resources": ["clustercatalogs"],
    }
    configuration = {
        "apiVersion": kinds.MUTATING_WEBHOOK_CONFIGURATION.api_version,
        "kind": kinds.MUTATING_WEBHOOK_CONFIGURATION.kind,
        "metadata": {"name": marker},
        "webhooks": [
            {
                "name": "inject-metadata-name.olm.operatorframework.io",
                "clientConfig": {
                    "url": url,
                    "caBundle": base64.b64encode(env.control_plane.ca_file.read_bytes()).decode(),
                },
                "rules": [rule],
                "objectSelector": {"matchLabels": {"e2e-webhook": marker}},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
                "timeoutSeconds": 10,
            }
        ],
    }
    await env.kube.create(configuration)
    try:
        # The API server loads the configuration a moment after it is created; until then a create
        # skips the webhook (failurePolicy only covers a webhook that is called).
        await settle.mutating(
            env.kube,
            webhook_catalog("probe", marker),
            applied=lambda c: c["metadata"]["labels"].get(names.METADATA_NAME_LABEL) == c["metadata"]["name"],
            what=f"the API server to call catalogd's webhook of MutatingWebhookConfiguration {marker}",
        )
        yield marker
    finally:
        await env.kube.delete(kinds.MUTATING_WEBHOOK_CONFIGURATION, marker)


def webhook_catalog(name: str, marker: str, **labels: str) -> dict[str, Any]:
    """An Unavailable catalog (nothing is pulled) the `webhook` of `marker` is called for."""
    obj = cluster_catalog(name, "quay.io/e2e/none:v1", availabilityMode="Unavailable")
    obj["metadata"]["labels"] = {"e2e-webhook": marker, **labels}
    return obj


async def create_through_webhook(env: Env, obj: dict[str, Any]) -> dict[str, Any]:
    """Create `obj` and read it back: the `webhook` fixture returned once the API server calls the
    webhook, and its failurePolicy is Fail, so a create that succeeds went through it."""
    await env.catalogs.create(obj)
    return await env.catalogs.get(obj["metadata"]["name"])
