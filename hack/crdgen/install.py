"""Install the generated CRDs on a cluster: what `make run` and the e2e suites need first."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import yaml

from olm.api import names
from olm.api.models import RESOURCES
from olm_runtime.client import Client, GroupVersionKind, errors

CRD_DIR = Path(__file__).resolve().parents[2] / "manifests" / "crds"


async def install(client: Client, *, field_manager: str = "olm-crds", timeout: float = 60.0) -> None:
    """Server-side apply every CRD under `manifests/crds` (create or update) and return once each
    kind is served: a fresh CRD is listed by discovery a moment after it is created."""
    for path in sorted(CRD_DIR.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        await client.apply(document, field_manager=field_manager, force=True)
    deadline = time.monotonic() + timeout
    for resource in RESOURCES:
        gvk = GroupVersionKind(names.GROUP, names.VERSION, resource.info.kind)
        while True:
            try:
                await client.list(gvk)
                break
            except (errors.APIError, LookupError):
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"{resource.info.crd_name} is not served after {timeout:.0f}s"
                    ) from None
                await asyncio.sleep(0.1)


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
