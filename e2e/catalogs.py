"""ClusterCatalogs in e2e tests: remove them so that the next test finds nothing of theirs (shared by
the suites that run catalogd as a process)."""

from __future__ import annotations

import contextlib

from olm.api.kinds import CLUSTER_CATALOG
from olm_runtime.client import Client, errors
from olm_runtime.testing.poll import eventually


async def delete_catalog(kube: Client, name: str) -> None:
    """Delete and wait until catalogd dropped its finalizer (so call it while catalogd runs)."""
    with contextlib.suppress(errors.NotFound):
        await kube.delete(CLUSTER_CATALOG, name)

    async def gone() -> bool:
        try:
            await kube.get(CLUSTER_CATALOG, name)
        except errors.NotFound:
            return True
        return False

    await eventually(gone, what=f"ClusterCatalog {name} to be deleted", timeout=60)
