"""OLM's pytest plugin: the fixtures every OLM test suite shares (registered by conftest.py).

On top of the runtime's fixtures (`olm_runtime.testing.pytest_plugin`: the control plane, the
registry, clients, namespaces) it adds what only OLM's suites need:

- `kube` (an admin client for the session), `pusher` (a client of the session's registry),
  `olm_crds` (OLM's CRDs installed and served, and the system namespace), `installer` (cluster-admin
  ServiceAccounts for tests that are not about permissions), `olmctl` (the CLI as a subprocess);
- the log of every catalogd or operator-controller process a failed test used, in its report;
- Hypothesis profiles (`ci` when `$CI` is set: derandomized), and structlog's process-wide
  configuration restored after each test;
- a real kubelet node and the network it joins, and cert-manager. Their binaries (kubelet,
  kube-proxy, CoreDNS, pause, cert-manager) must be in `control_plane_binaries`' directory; olm-py's
  e2e conftest.py points that fixture at the binaries `olm_testkit.binaries` builds.

Real nodes (`real_nodes`) need root and node networks made before the control plane starts:
override `node_networks` to return them (see `olm_testkit.node.networks`); by default there are
none and everything listens on loopback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import settings

from olm_runtime.client import Client, errors, kinds, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit import crds
from olm_testkit.certmanager import CertManager
from olm_testkit.images.registry import RegistryClient
from olm_testkit.installer import create_cluster_admin_account
from olm_testkit.names import unique
from olm_testkit.node import NodeOptions, RealNode, networks
from olm_testkit.nodenet import NodeNetwork
from olm_testkit.olmctl import Olmctl
from olm_testkit.processes import Subprocess

FIELD_MANAGER = "e2e"

# In CI (`CI` set) property tests run derandomized, so a run fails or passes the same way every time
# and a failure seen there reproduces locally with `HYPOTHESIS_PROFILE=ci`. Deadlines are off
# everywhere: the machines are shared and a slow example is not a failing one.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """structlog's configuration is process-wide: a test that runs a process's `main()` configures
    it (olmctl filters below warnings), and without this a later test's `capture_logs()` saw nothing
    of what its code logged at info. The list is copied because `capture_logs` edits it in place."""
    saved = structlog.get_config()
    saved["processors"] = list(saved["processors"])
    try:
        yield
    finally:
        structlog.configure(**saved)
        structlog.contextvars.clear_contextvars()


def _processes(values: Iterable[object]) -> Iterator[Subprocess]:
    """The catalogd and operator-controller processes among a test's fixture values: directly, in a
    list or tuple (replicas), or as a field of a dataclass (a fixture bundling several)."""
    for value in values:
        if isinstance(value, Subprocess):
            yield value
        elif isinstance(value, list | tuple):
            yield from (v for v in value if isinstance(v, Subprocess))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            yield from (v for v in vars(value).values() if isinstance(v, Subprocess))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed test's report carries the log tail of every process it used."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if report.when != "call" or not report.failed:
        return
    seen: set[int] = set()
    for process in _processes(getattr(item, "funcargs", {}).values()):
        if id(process) not in seen:
            seen.add(id(process))
            report.sections.append((f"{process.component} log ({process.workdir})", process.log_tail(150)))


@pytest.fixture(scope="session")
async def kube(control_plane: ControlPlane) -> AsyncIterator[Client]:
    """An admin client for the session (field manager `e2e`; `admin_client` is one per test)."""
    config = await load_config(kubeconfig=control_plane.kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        yield client


@pytest.fixture(scope="session")
def pusher(registry: Registry) -> RegistryClient:
    """Pushes images to the session's registry."""
    return RegistryClient(host=registry.host, ca_file=registry.ca_file)


@pytest.fixture(scope="session")
async def olm_crds(kube: Client) -> None:
    """OLM's CRDs installed (or updated) and served, and the system namespace created: what catalogd
    and operator-controller need before they start as processes."""
    await crds.install_with_system_namespace(kube, field_manager="e2e-crds")


Installer = Callable[[str], Awaitable[str]]
"""`await installer(namespace)`: the name of a new ServiceAccount there bound to cluster-admin."""


@pytest.fixture
async def installer(kube: Client) -> AsyncIterator[Installer]:
    """For tests that are not about permissions: ServiceAccounts that may do anything, in effect
    (the API server's authorizer has seen the binding) when returned. Their ClusterRoleBindings are
    deleted after the test; the namespace takes the ServiceAccounts."""
    bindings: list[str] = []

    async def make(namespace: str) -> str:
        name = unique("installer")
        await create_cluster_admin_account(kube, namespace, name, binding=name)
        bindings.append(name)
        return name

    try:
        yield make
    finally:
        for name in bindings:
            with contextlib.suppress(errors.NotFound):
                await kube.delete(kinds.CLUSTER_ROLE_BINDING, name)


@pytest.fixture
def olmctl(control_plane: ControlPlane) -> Olmctl:
    """olmctl run as a subprocess against the session's cluster, trusting its CA for catalogd."""
    return Olmctl(control_plane.kubeconfig, control_plane.ca_file)


@pytest.fixture(scope="session")
def node_networks() -> list[NodeNetwork]:
    """The networks real nodes join, made before the control plane (none: no real nodes)."""
    return []


@pytest.fixture(scope="session")
def control_plane_address(node_networks: list[NodeNetwork]) -> str:
    """The first node network's host address when there are real nodes, so their Pods reach the
    control plane and containerd pulls from the registry; loopback otherwise."""
    return node_networks[0].host_ip if node_networks else "127.0.0.1"


@pytest.fixture(scope="session")
def real_nodes(
    control_plane: ControlPlane,
    control_plane_binaries: Path,
    registry: Registry,
    node_networks: list[NodeNetwork],
) -> Iterator[list[RealNode]]:
    """A real kubelet node (containerd, CNI bridge, kube-proxy, CoreDNS) on each node network, all
    pulling from the session's registry, which is also their mirror of Docker Hub: started on first
    request and stopped, with everything they made, at the end of the session."""
    if not node_networks:
        pytest.fail("real nodes need node networks: override the node_networks fixture (needs root)")
    owner = control_plane.state_dir.parent
    nodes = [
        RealNode(
            NodeOptions(
                binary_dir=control_plane_binaries,
                state_dir=networks.state_dir(owner, network),
                network=network,
                owner=owner,
                kubeconfig=control_plane.kubeconfig,
                server=control_plane.server,
                ca=control_plane.certificate_authority(),
                mirror=registry.host,
                tie_to_parent=True,
            )
        )
        for network in node_networks
    ]
    try:
        # One after the other, from this thread: the nodes' processes are tied to the thread that
        # starts them (`tie_to_parent`), and a pool's worker thread ends before the session does.
        for node in nodes:
            node.up()
        yield nodes
        for node in nodes:
            node.check()
    finally:
        for node in nodes:
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
