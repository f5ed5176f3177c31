"""pytest fixtures for a real control plane and registry, started once per test session.

olm-runtime's `pytest11` entry point registers it; `pytest_plugins =
["olm_runtime.testing.pytest_plugin"]` in the top-level conftest.py does too. The binaries are found
through the `control_plane_binaries` fixture: the directory named by `$OLMPY_ASSETS` when set, else
the pinned ones, built into the cache on first use (`olm_runtime.testing.binaries`); override the
fixture to locate them another way.

Tests share one control plane, so isolate them by namespace (the `namespace` fixture) and by name.
Every process is stopped at the end of the session, and also if the session is killed. The control
plane and the registry listen on loopback; override `control_plane_address` to have them listen
where something else reaches them too (a network namespace's end of a veth, say).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client, config

from olm_runtime.client import Client, load_config
from olm_runtime.testing import binaries
from olm_runtime.testing.controlplane import ControlPlane, ControlPlaneOptions
from olm_runtime.testing.registry import Registry, RegistryOptions


@pytest.fixture(scope="session")
def control_plane_binaries() -> Path:
    """Directory of the control-plane binaries: `$OLMPY_ASSETS` when set, else the pinned ones,
    found in the cache or built there first (`python -m olm_runtime.testing binaries`)."""
    assets = os.environ.get("OLMPY_ASSETS")
    if assets:
        return Path(assets)
    try:
        return binaries.ensure()
    except binaries.BuildError as err:
        pytest.fail(
            f"no control-plane binaries: {err}\n(set OLMPY_ASSETS to a directory of them, "
            "or override the control_plane_binaries fixture)"
        )


@pytest.fixture(scope="session")
def control_plane_address() -> str:
    """The address the control plane and the registry listen on: loopback."""
    return "127.0.0.1"


@pytest.fixture(scope="session")
def control_plane(
    control_plane_binaries: Path, tmp_path_factory: pytest.TempPathFactory, control_plane_address: str
) -> Iterator[ControlPlane]:
    """A running control plane shared by the whole session, on `control_plane_address`."""
    plane = ControlPlane(
        ControlPlaneOptions(
            binary_dir=control_plane_binaries,
            state_dir=tmp_path_factory.mktemp("controlplane"),
            tie_to_parent=True,
            address=control_plane_address,
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
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory, control_plane_address: str
) -> Iterator[Registry]:
    """A TLS registry whose certificate the control plane's CA issued, on `control_plane_address`."""
    reg = Registry(
        RegistryOptions(
            state_dir=tmp_path_factory.mktemp("registry"),
            ca=control_plane.certificate_authority(),
            tie_to_parent=True,
            address=control_plane_address,
        )
    )
    reg.up()
    try:
        yield reg
    finally:
        reg.down()


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
