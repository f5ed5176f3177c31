"""pytest fixtures for a real control plane and registry, started once per test session.

Enable with `pytest_plugins = ["olm_runtime.testing.pytest_plugin"]` in the top-level conftest.py.
The binaries are found through the `control_plane_binaries` fixture: by default the directory named
by `$OLMPY_ASSETS`; override the fixture to build or locate them another way.

Tests share one control plane, so isolate them by namespace (the `namespace` fixture) and by name.
Every process is stopped at the end of the session, and also if the session is killed.

Real nodes (`real_node`) need root and a node network made before the control plane starts:
override `node_network` to return one (see `olm_runtime.testing.nodenet`); by default there is
none and everything listens on loopback.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client, config

from olm_runtime.client import Client, load_config
from olm_runtime.testing.certmanager import CertManager
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions
from olm_runtime.testing.node import NodeOptions, RealNode
from olm_runtime.testing.nodenet import NodeNetwork
from olm_runtime.testing.registry import Registry, RegistryOptions


@pytest.fixture(scope="session")
def control_plane_binaries() -> Path:
    """Directory of the control-plane binaries (`$OLMPY_ASSETS`)."""
    assets = os.environ.get("OLMPY_ASSETS")
    if not assets:
        pytest.fail(
            "set OLMPY_ASSETS to the directory of the control-plane binaries "
            "or override the control_plane_binaries fixture"
        )
    return Path(assets)


@pytest.fixture(scope="session")
def node_network() -> NodeNetwork | None:
    """The network real nodes join, made before the control plane (None: no real nodes)."""
    return None


@pytest.fixture(scope="session")
def control_plane(
    control_plane_binaries: Path, tmp_path_factory: pytest.TempPathFactory, node_network: NodeNetwork | None
) -> Iterator[ControlPlane]:
    """A running control plane shared by the whole session; it listens on the node network's host
    address when there is one, so Pods on real nodes reach it."""
    plane = ControlPlane(
        ControlPlaneOptions(
            binary_dir=control_plane_binaries,
            state_dir=tmp_path_factory.mktemp("controlplane"),
            tie_to_parent=True,
            address=node_network.host_ip if node_network else "127.0.0.1",
        )
    )
    plane.up()
    try:
        yield plane
        plane.check()  # a component that died mid-session fails the session loudly
    finally:
        plane.down()


@pytest.fixture(scope="session")
def registry(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory, node_network: NodeNetwork | None
) -> Iterator[Registry]:
    """A TLS registry whose certificate the control plane's CA issued: on loopback, or on the node
    network's host address when there is one (so containerd and Pods pull from it too)."""
    reg = Registry(
        RegistryOptions(
            state_dir=tmp_path_factory.mktemp("registry"),
            ca=control_plane.certificate_authority(),
            tie_to_parent=True,
            address=node_network.host_ip if node_network else "127.0.0.1",
        )
    )
    reg.up()
    try:
        yield reg
    finally:
        reg.down()


@pytest.fixture(scope="session")
def real_node(
    control_plane: ControlPlane,
    control_plane_binaries: Path,
    registry: Registry,
    node_network: NodeNetwork | None,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealNode]:
    """A real kubelet node (containerd, CNI bridge, kube-proxy, CoreDNS) that pulls from `registry`,
    started on first request and stopped, with everything it made, at the end of the session."""
    if node_network is None:
        pytest.fail("real nodes need a node network: override the node_network fixture (needs root)")
    node = RealNode(
        NodeOptions(
            binary_dir=control_plane_binaries,
            state_dir=control_plane.state_dir.parent / "node",
            network=node_network,
            owner=control_plane.state_dir.parent,
            kubeconfig=control_plane.kubeconfig,
            server=control_plane.server,
            ca=control_plane.certificate_authority(),
            tie_to_parent=True,
        )
    )
    node.up()
    try:
        yield node
        node.check()
    finally:
        node.down()


@pytest.fixture(scope="session")
async def cert_manager(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CertManager]:
    """cert-manager's CRDs, controller and cainjector on the control plane, started on first request
    (only sessions with a test that asks for it pay for it) and stopped with the session."""
    manager = CertManager(control_plane, tmp_path_factory.mktemp("cert-manager"))
    await manager.up()
    try:
        yield manager
        manager.check()  # a process that died mid-session fails the session loudly
    finally:
        manager.stop()


@pytest.fixture(scope="session")
async def api_client(control_plane: ControlPlane) -> AsyncIterator[client.ApiClient]:
    """A kubernetes-asyncio client authenticated as the cluster admin."""
    configuration = client.Configuration()
    await config.load_kube_config(
        config_file=str(control_plane.kubeconfig), client_configuration=configuration
    )
    async with client.ApiClient(configuration) as api:
        yield api


@pytest.fixture
async def admin_client(control_plane: ControlPlane) -> AsyncIterator[Client]:
    """An `olm_runtime.client.Client` authenticated as the cluster admin (field manager `e2e`)."""
    config = await load_config(kubeconfig=control_plane.kubeconfig)
    async with await Client.connect(config, field_manager="e2e") as client:
        yield client


@pytest.fixture
async def namespace(api_client: client.ApiClient) -> AsyncIterator[str]:
    """A fresh namespace for one test, deleted afterwards (deletion is not awaited)."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    core = client.CoreV1Api(api_client)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        await core.delete_namespace(name)
