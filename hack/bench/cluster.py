"""The cluster a benchmark runs against, and what it sets up there before it measures: a control
plane (with a registry trusting its CA), installer ServiceAccounts, the content it publishes."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson

from olm import fbc, semver
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions
from olm_runtime.testing.registry import Registry, RegistryOptions
from olm_testkit import binaries
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.installer import create_cluster_admin_account

INSTALLER = "installer"
"""The ServiceAccount extensions and revisions of a benchmark are applied as."""
PODS_PER_NODE = 110
"""What a kubelet allows, and what `plane_and_registry` sizes its kwok nodes by."""
SYSTEM_PODS = 20
"""Pods beside the extensions' own: cert-manager, CoreDNS and the like."""


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
    plane = ControlPlane(ControlPlaneOptions(binary_dir=binaries.ensure_binaries(), state_dir=state, nodes=1))
    plane.up()
    try:
        yield str(plane.kubeconfig)
    finally:
        plane.down()


@contextlib.contextmanager
def plane_and_registry(
    workdir: Path, *, pods: int = PODS_PER_NODE, apiserver_args: tuple[str, ...] = ()
) -> Iterator[tuple[ControlPlane, Registry]]:
    """A control plane with kwok nodes enough for `pods` Pods (110 each, as a kubelet allows) and a
    registry trusting its CA, up for the block (every bench that runs OLM as processes uses it, so
    they measure against the same setup)."""
    plane = ControlPlane(
        ControlPlaneOptions(
            binary_dir=binaries.ensure_binaries(),
            state_dir=workdir / "controlplane",
            nodes=-(-pods // PODS_PER_NODE),
            tie_to_parent=True,
            apiserver_args=apiserver_args,
        )
    )
    plane.up()
    try:
        registry = Registry(
            RegistryOptions(
                state_dir=workdir / "registry", ca=plane.certificate_authority(), tie_to_parent=True
            )
        )
        registry.up()
        try:
            yield plane, registry
        finally:
            registry.down()
    finally:
        plane.down()


def pusher(registry: Registry) -> RegistryClient:
    """A client pushing images into `registry` (trusting the CA that issued its certificate)."""
    return RegistryClient(host=registry.host, ca_file=registry.ca_file)


def latest_published(published: realdata.PublishedCatalog, package: str) -> str:
    """The highest version of `package` whose bundle image was pushed."""
    best: tuple[semver.Version, str] | None = None
    for meta in fbc.iter_metas(published.directory / package):
        if meta.schema != fbc.SCHEMA_BUNDLE or meta.name in published.unpublished:
            continue
        for prop in orjson.loads(meta.blob).get("properties") or ():
            if prop.get("type") == "olm.package":
                text = str(prop["value"]["version"])
                version = semver.parse_version(text)
                if best is None or best[0] < version:
                    best = (version, text)
    if best is None:
        raise LookupError(f"no published bundle of {package}")
    return best[1]
