"""One side of `make bench-upstream`: a control plane, a registry, cert-manager and one OLM (ours or
upstream's) on it, with the catalogs both sides serve published into that side's registry.

Each side has a plane of its own, so neither OLM sees the other's objects, and each OLM runs as
ServiceAccounts of its own (`olmv1-system/catalogd`, `olmv1-system/operator-controller`, bound to
cluster-admin) so the API server's audit log attributes every request it makes. With those rights
ours may share its drift watches as upstream always does (`--shared-drift-watches`, on unless the
run says otherwise).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from hack.bench import cluster
from hack.bench.shipped import shipped_python
from hack.bench.upstream.peer import Peer
from hack.bench.upstream.processes import UpstreamCatalogd, UpstreamOperatorController
from olm.api import names
from olm_runtime.client import Client, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit import crds
from olm_testkit.certmanager import CertManager
from olm_testkit.images.registry import RegistryClient
from olm_testkit.installer import create_cluster_admin_account
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess, Subprocess, token_kubeconfig

FIELD_MANAGER = "bench-upstream"
SHARED_DRIFT_WATCHES = "--shared-drift-watches"
ACCOUNTS = ("catalogd", "operator-controller")


@dataclass
class Side:
    name: str
    plane: ControlPlane
    registry: Registry
    kube: Client
    catalogd: Subprocess
    controller: Subprocess

    @property
    def pusher(self) -> RegistryClient:
        return cluster.pusher(self.registry)

    def pid(self, process: Subprocess) -> int:
        assert process.process is not None, f"{self.name} {process.component} is not running"
        return process.process.pid


async def _accounts(kube: Client, workdir: Path, plane: ControlPlane) -> dict[str, Path]:
    await kube.apply(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": names.DEFAULT_SYSTEM_NAMESPACE}},
        force=True,
    )
    configs = {}
    for account in ACCOUNTS:
        await create_cluster_admin_account(
            kube, names.DEFAULT_SYSTEM_NAMESPACE, account, binding=f"bench-{account}"
        )
        configs[account] = await token_kubeconfig(
            kube,
            plane,
            namespace=names.DEFAULT_SYSTEM_NAMESPACE,
            name=account,
            path=workdir / f"{account}.kubeconfig",
        )
    return configs


@contextlib.asynccontextmanager
async def side(
    name: str, workdir: Path, peer: Peer | None, *, pods: int, shared_drift_watches: bool
) -> AsyncIterator[Side]:
    """`name` is "ours" or "upstream" (then `peer` gives the binaries), with kwok nodes enough for
    `pods` Pods; up for the block. `shared_drift_watches` applies to ours only."""
    with cluster.plane_and_registry(workdir, pods=pods) as (plane, registry):
        config = await load_config(kubeconfig=plane.kubeconfig)
        async with await Client.connect(config, field_manager=FIELD_MANAGER) as kube:
            if peer is None:
                await crds.install(kube, field_manager=FIELD_MANAGER)
            else:
                for crd in peer.crds():
                    await kube.apply(crd, force=True)
            configs = await _accounts(kube, workdir, plane)
            cert_manager = CertManager(plane, workdir / "cert-manager")
            await cert_manager.up()
            catalogd: Subprocess
            controller: Subprocess
            if peer is None:
                # As deployed: the image's packages and the manifests' log format.
                python = await asyncio.to_thread(shipped_python)
                catalogd = CatalogdProcess(
                    plane,
                    workdir / "catalogd",
                    webhook=False,
                    kubeconfig=configs["catalogd"],
                    python=python,
                    extra_args=("--log-format=json",),
                    scope_selector=None,  # as shipped: the bench starts no controller beside it
                )
                controller = OperatorControllerProcess(
                    plane,
                    workdir / "operator-controller",
                    kubeconfig=configs["operator-controller"],
                    python=python,
                    scope_selector=None,
                    extra_args=(
                        "--log-format=json",
                        *([SHARED_DRIFT_WATCHES] if shared_drift_watches else []),
                    ),
                )
            else:
                catalogd = UpstreamCatalogd(
                    peer.binary("catalogd"), plane, workdir / "catalogd", configs["catalogd"]
                )
                controller = UpstreamOperatorController(
                    peer.binary("operator-controller"),
                    plane,
                    workdir / "operator-controller",
                    configs["operator-controller"],
                )
            catalogd.start()
            controller.start()
            try:
                await asyncio.gather(catalogd.wait_ready(timeout=120), controller.wait_ready(timeout=120))
                yield Side(name, plane, registry, kube, catalogd, controller)
            finally:
                controller.stop()
                catalogd.stop()
                cert_manager.stop()


def watch_per_service_account(s: Side) -> None:
    """From its next start, ours watches managed objects per ServiceAccount (its default)."""
    assert isinstance(s.controller, OperatorControllerProcess)
    s.controller.extra_args = tuple(a for a in s.controller.extra_args if a != SHARED_DRIFT_WATCHES)
