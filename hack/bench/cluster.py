"""The cluster a benchmark runs against, and what it sets up there before it measures."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

from hack.controlplane import build
from hack.installer import create_cluster_admin_account
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions

INSTALLER = "installer"
"""The ServiceAccount extensions and revisions of a benchmark are applied as."""


async def installer_namespace(kube: Client, namespace: str) -> str:
    """A fresh namespace with a ServiceAccount bound to cluster-admin; the account's name."""
    await kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    await create_cluster_admin_account(kube, namespace, INSTALLER, binding=f"{namespace}-installer")
    return INSTALLER


@contextlib.contextmanager
def kubeconfig_or_control_plane(kubeconfig: str | None, *, prefix: str) -> Iterator[str]:
    """`kubeconfig` when given; otherwise that of a one-node control plane (binaries from
    `hack.controlplane`, state in a `prefix`-named temporary directory) up for the block."""
    if kubeconfig is not None:
        yield kubeconfig
        return
    state = Path(tempfile.mkdtemp(prefix=prefix))
    plane = ControlPlane(ControlPlaneOptions(binary_dir=build.ensure_binaries(), state_dir=state, nodes=1))
    plane.up()
    try:
        yield str(plane.kubeconfig)
    finally:
        plane.down()
