"""Two catalogd replicas with leader election: both serve every catalog the leader resolved.

Both run as the `catalogd` ServiceAccount with the RBAC of `manifests/catalogd/rbac.yaml` and
elect their leader with a Lease in `olmv1-system`, so this also proves the shipped permissions are
enough (ClusterCatalogs, their finalizer and status, Events, Leases).

The leader resolves and writes status; the other replica follows `status.resolvedSource` and
unpacks the same digest into its own storage, so neither answers 404 once the catalog is Serving.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from e2e.catalogd.conftest import Catalogs, fetch_all, service_account_kubeconfig, source_metas, write_catalog
from olm.api import names
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import cluster_catalog, push_catalog
from olm_testkit.images.registry import RegistryClient as PushClient
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess


@pytest.fixture(scope="module")
async def replicas(
    control_plane: ControlPlane, olm_crds: None, tmp_path_factory: pytest.TempPathFactory, kube: Client
) -> AsyncIterator[list[CatalogdProcess]]:
    lease = unique("catalogd-ha")
    kubeconfig = await service_account_kubeconfig(
        kube, control_plane, tmp_path_factory.mktemp("sa") / "kubeconfig"
    )
    processes = [
        CatalogdProcess(
            control_plane,
            tmp_path_factory.mktemp(f"replica{i}"),
            leader_elect=True,
            lease_namespace=names.DEFAULT_SYSTEM_NAMESPACE,
            lease_name=lease,
            webhook=False,
            kubeconfig=kubeconfig,
        )
        for i in range(2)
    ]
    try:
        for process in processes:
            process.start()
        for process in processes:
            await process.wait_ready()
        yield processes
    finally:
        for process in processes:
            process.stop()


async def test_every_replica_serves_what_the_leader_resolved(
    replicas: list[CatalogdProcess],
    catalogs: Catalogs,
    pusher: PushClient,
    registry: Registry,
    tmp_path: Path,
) -> None:
    context = ssl.create_default_context(cafile=str(replicas[0].control_plane.ca_file))
    name, ref = unique("ha"), f"{registry.host}/{unique('e2e/ha')}:latest"
    first_source = write_catalog(tmp_path / "v1", "ha-pkg", ["1.0.0"])
    first = push_catalog(pusher, first_source, ref)
    await catalogs.create(cluster_catalog(name, ref, poll_minutes=1))
    await catalogs.wait_serving(name, first)

    async def every_replica_serves(source: Path) -> bool:
        expected = (200, source_metas(source))
        results = [await fetch_all(context, f"{replica.catalogs_url}/{name}") for replica in replicas]
        return all(result == expected for result in results)

    await eventually(lambda: every_replica_serves(first_source), what="both replicas to serve the catalog")

    # A new image under the tag: the leader picks it up by polling, the follower follows the status.
    second_source = write_catalog(tmp_path / "v2", "ha-pkg", ["1.0.0", "2.0.0"])
    second = push_catalog(pusher, second_source, ref)
    await catalogs.wait_serving(name, second, timeout=30)
    await eventually(lambda: every_replica_serves(second_source), what="both replicas to serve the new image")
