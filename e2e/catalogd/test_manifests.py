"""The hand-written catalogd manifests are valid for the real API server (server-side dry run).

The Namespace is also created for real first (dry-run objects in a namespace need it to exist);
everything is applied with dryRun=All, so admission, schema and CEL validation all run. cert-manager's
kinds are checked against the CRDs of the pinned cert-manager release (the `cert_manager` fixture).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from olm_runtime.client import Client
from olm_testkit.certmanager import CertManager

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests" / "catalogd"


def _documents() -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    for path in sorted(MANIFESTS.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        documents += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return documents


def test_the_kustomization_lists_every_manifest() -> None:
    listed = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())["resources"]
    present = {p.name for p in MANIFESTS.glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(listed) == sorted(present)


def test_the_deployment_runs_non_root_with_a_read_only_root_filesystem() -> None:
    (deployment,) = [d for d in _documents() if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"


@pytest.fixture(scope="module")
async def system_namespace(kube: Client) -> None:
    """Create the Namespace for real (idempotently): dry-run objects in it need it to exist."""
    (namespace,) = [d for d in _documents() if d["kind"] == "Namespace"]
    await kube.apply(namespace, field_manager="e2e-manifests", force=True)


@pytest.mark.parametrize(
    "document",
    [pytest.param(d, id=f"{d['kind']}-{d['metadata']['name']}") for d in _documents()],
)
async def test_each_manifest_is_accepted_by_the_api_server(
    document: dict[str, Any],
    admin_client: Client,
    olm_crds: None,
    system_namespace: None,
    cert_manager: CertManager,
) -> None:
    applied = await admin_client.apply(document, field_manager="e2e-manifests", force=True, dry_run=True)
    assert applied["kind"] == document["kind"]
    assert applied["metadata"]["name"] == document["metadata"]["name"]
