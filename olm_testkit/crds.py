"""Install OLM's cluster-scoped API on a cluster (the generated CRDs and the ClusterObjectSet identity
admission policy): what `make run` and the e2e suites need first."""

from __future__ import annotations

from pathlib import Path

import yaml

from olm.api import names
from olm.api.models import COMPATIBILITY_RESOURCES, RESOURCES
from olm_runtime.client import Client
from olm_runtime.testing import settle

CRD_DIR = Path(__file__).resolve().parents[1] / "manifests" / "crds"
IDENTITY_POLICY = CRD_DIR.parent / "operator-controller" / "identity-policies.yaml"


async def install(client: Client, *, field_manager: str = "olm-crds", timeout: float = 60.0) -> None:
    """Server-side apply every CRD under `manifests/crds` (create or update), and the admission
    policy that guards the ServiceAccount a ClusterObjectSet names (operator-controller acts as no
    named account without it), and return once each kind is served: a fresh CRD is listed by
    discovery, and its storage ready, a moment after it is Established."""
    for path in sorted(CRD_DIR.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        await client.apply(document, field_manager=field_manager, force=True)
    for document in yaml.safe_load_all(IDENTITY_POLICY.read_text(encoding="utf-8")):
        await client.apply(document, field_manager=field_manager, force=True)
    for resource in (*RESOURCES, *COMPATIBILITY_RESOURCES):
        await settle.crd_served(client, resource.info.crd_name, timeout=timeout)


async def install_with_system_namespace(client: Client, *, field_manager: str = "olm-crds") -> None:
    """The CRDs (as `install`) and the system Namespace: what catalogd and operator-controller need
    on a cluster before they start as processes."""
    await install(client, field_manager=field_manager)
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": names.DEFAULT_SYSTEM_NAMESPACE},
    }
    await client.apply(namespace, field_manager=field_manager, force=True)
