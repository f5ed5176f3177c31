"""HTTPS_PROXY and NO_PROXY, through a real proxy (tinyproxy on loopback): catalogd's pulls from a
registry and operator-controller's requests to catalogd and to the registry.

Go's rules, which the processes follow, never send requests to loopback through a proxy, and the
session's registry and catalogds listen on loopback. So this module runs a registry and a catalogd
of its own on this machine's primary (non-loopback) address, whose certificates name it: the
proxy then really relays. Its catalogds reconcile only the ClusterCatalogs labelled with this
module's scope. Its operator-controllers, one per test with the environment it needs, reconcile
every ClusterExtension as the shipped one does (a scoped one would leave the extension's
ClusterObjectSets, which carry no scope label, to nobody): this directory sorts before
`e2e/operator_controller`, whose session pair starts only after it is done.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from e2e.operator_controller.conftest import wait_installed
from olm import oci
from olm.api import conditions as api
from olm.api.kinds import CLUSTER_CATALOG
from olm.compat import httpproxy
from olm.process import testing_seams
from olm_runtime import conditions
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.pki import CertificateAuthority
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports
from olm_runtime.testing.registry import Registry, RegistryOptions
from olm_testkit import catalogs, tinyproxy
from olm_testkit.extensions import Extensions
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

SCOPE = {testing_seams.SCOPE_LABEL: "proxy"}
SCOPE_SELECTOR = f"{testing_seams.SCOPE_LABEL}=proxy"


def primary_address() -> str:
    """The address this machine's default route leaves from (a UDP `connect` sends nothing)."""
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_DGRAM)) as probe:
        try:
            probe.connect(("198.51.100.1", 9))
        except OSError as error:
            raise AssertionError(f"no non-loopback address to run a proxied registry on: {error}") from None
        address = str(probe.getsockname()[0])
    assert not address.startswith("127."), address
    return address


@dataclass(frozen=True)
class Remote:
    """The module's registry on the primary address and the catalog published to it."""

    address: str
    registry: Registry
    published: realdata.PublishedCatalog


@pytest.fixture(scope="module")
async def remote(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Remote]:
    address = primary_address()
    registry = Registry(
        RegistryOptions(
            state_dir=tmp_path_factory.mktemp("proxied-registry"),
            ca=control_plane.certificate_authority(),
            tie_to_parent=True,
            address=address,
        )
    )
    await asyncio.to_thread(registry.up)
    try:
        pusher = RegistryClient(host=registry.host, ca_file=registry.ca_file)
        published = await asyncio.to_thread(
            realdata.publish_fixture_catalog, pusher, registry.host, version="v1", repository_prefix="proxy"
        )
        yield Remote(address, registry, published)
    finally:
        await asyncio.to_thread(registry.down)


@contextlib.asynccontextmanager
async def scoped_catalogd(
    control_plane: ControlPlane, workdir: Path, env: Mapping[str, str], *, address: str = "127.0.0.1"
) -> AsyncIterator[CatalogdProcess]:
    process = CatalogdProcess(
        control_plane, workdir, env=env, scope_selector=SCOPE_SELECTOR, webhook=False, address=address
    )
    async with process.running():
        yield process


@contextlib.asynccontextmanager
async def cluster_catalog(kube: Client, ref: str) -> AsyncIterator[str]:
    """A ClusterCatalog of `ref` in this module's scope, deleted after the block; its name."""
    name = unique("proxy")
    await kube.create(catalogs.cluster_catalog(name, ref, labels=SCOPE, name_label=True))
    try:
        yield name
    finally:
        await catalogs.delete_catalog(kube, name)


async def test_catalogd_pulls_a_catalog_through_the_proxy(
    control_plane: ControlPlane, kube: Client, olm_crds: None, remote: Remote, tmp_path: Path
) -> None:
    async with (
        tinyproxy.running(tmp_path / "proxy") as proxy,
        scoped_catalogd(control_plane, tmp_path / "catalogd", {"HTTPS_PROXY": proxy.url}),
        cluster_catalog(kube, remote.published.digest_ref) as name,
    ):
        await catalogs.wait_serving(kube, name)
        assert proxy.requested(remote.registry.host) >= 1, proxy.log()
        assert proxy.relayed(remote.address) >= 1, proxy.log()
        print(
            f"proxy relayed {proxy.relayed(remote.address)} connections to the registry for one catalog pull"
        )


async def test_catalogd_pulls_through_an_https_proxy_trusted_by_the_pull_cas(
    control_plane: ControlPlane, kube: Client, olm_crds: None, remote: Remote, tmp_path: Path
) -> None:
    """TLS to the proxy, then TLS to the registry inside the tunnel: the proxy's certificate is
    verified with the `--pull-cas-dir` CAs (the control plane's CA issued it)."""
    pair = control_plane.certificate_authority().issue(
        "https-proxy", common_name="proxy", hosts=["127.0.0.1"]
    )
    async with (
        tinyproxy.running(tmp_path / "proxy", tls=(pair.cert_file, pair.key_file)) as proxy,
        scoped_catalogd(control_plane, tmp_path / "catalogd", {"HTTPS_PROXY": proxy.url}),
        cluster_catalog(kube, remote.published.digest_ref) as name,
    ):
        assert proxy.url.startswith("https://")
        await catalogs.wait_serving(kube, name)
        assert proxy.requested(remote.registry.host) >= 1, proxy.log()
        assert proxy.relayed(remote.address) >= 1, proxy.log()


async def test_an_untrusted_https_proxy_is_named_in_the_tls_failure(
    control_plane: ControlPlane, remote: Remote, tmp_path: Path
) -> None:
    other = CertificateAuthority.load_or_create(tmp_path / "other-ca", common_name="not trusted")
    pair = other.issue("https-proxy", common_name="proxy", hosts=["127.0.0.1"])
    async with tinyproxy.running(tmp_path / "proxy", tls=(pair.cert_file, pair.key_file)) as proxy:
        options = oci.ClientOptions(
            cache_dir=tmp_path / "cache",
            ca_files=(control_plane.ca_file,),
            proxies=httpproxy.Proxies.parse(https_proxy=proxy.url),
        )
        async with oci.RegistryClient(options) as client:
            with pytest.raises(oci.TLSVerificationFailed, match=f"TLS with proxy {proxy.url} failed"):
                await client.resolve(oci.Reference.parse(remote.published.ref))
        assert proxy.requested(remote.registry.host) == 0


async def test_no_proxy_sends_the_registry_direct(
    control_plane: ControlPlane, kube: Client, olm_crds: None, remote: Remote, tmp_path: Path
) -> None:
    async with tinyproxy.running(tmp_path / "proxy") as proxy:
        env = {"HTTPS_PROXY": proxy.url, "NO_PROXY": f"corp.example,{remote.address}"}
        async with (
            scoped_catalogd(control_plane, tmp_path / "catalogd", env),
            cluster_catalog(kube, remote.published.digest_ref) as name,
        ):
            await catalogs.wait_serving(kube, name)
        assert proxy.requested(remote.registry.host) == 0, proxy.log()


async def test_a_refusing_proxy_is_retried_and_named(
    control_plane: ControlPlane, kube: Client, olm_crds: None, remote: Remote, tmp_path: Path
) -> None:
    async with (
        tinyproxy.running(tmp_path / "proxy", refusing=True) as proxy,
        scoped_catalogd(control_plane, tmp_path / "catalogd", {"HTTPS_PROXY": proxy.url}),
        cluster_catalog(kube, remote.published.digest_ref) as name,
    ):
        expected = f"proxy {proxy.url} refused CONNECT to {remote.registry.host}: 403 Access violation"
        found: dict[str, Any] = {}

        async def retrying() -> bool:
            nonlocal found
            found = dict(await kube.get(CLUSTER_CATALOG, name))
            progressing = conditions.of(found, api.TYPE_PROGRESSING)
            return (
                progressing.get("status") == "True"
                and progressing.get("reason") == api.REASON_RETRYING
                and expected in str(progressing.get("message"))
            )

        await eventually(retrying, what=f"ClusterCatalog {name} Retrying naming the proxy", timeout=60)
        assert proxy.requested(remote.registry.host) >= 1
        assert proxy.relayed(remote.address) == 0, proxy.log()
        assert not conditions.is_true(found["status"]["conditions"], api.TYPE_SERVING)


@dataclass(frozen=True)
class Served:
    """A catalogd on the primary address, serving the fixture catalog as `name`."""

    catalogd: CatalogdProcess
    name: str

    @property
    def target(self) -> str:
        return f"{self.catalogd.address}:{self.catalogd.ports['catalogs']}"


@pytest.fixture(scope="module")
async def served(
    control_plane: ControlPlane,
    kube: Client,
    olm_crds: None,
    remote: Remote,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Served]:
    workdir = tmp_path_factory.mktemp("served-catalogd")
    async with (
        scoped_catalogd(control_plane, workdir, {}, address=remote.address) as catalogd,
        cluster_catalog(kube, remote.published.digest_ref) as name,
    ):
        await catalogs.wait_serving(kube, name)
        yield Served(catalogd, name)


@contextlib.asynccontextmanager
async def scoped_operator_controller(
    control_plane: ControlPlane, workdir: Path, env: Mapping[str, str]
) -> AsyncIterator[OperatorControllerProcess]:
    process = OperatorControllerProcess(control_plane, workdir, env=env)
    async with process.running():
        yield process


async def create_extension(extensions: Extensions, namespace: str, account: str, catalog: str) -> str:
    """A ClusterExtension of the fixture catalog's `test` 1.0.0, deleted by the test; its name."""
    name = unique("proxy")
    selector = catalogs.catalog_selector(catalog)
    await extensions.create(name, "test", namespace, account, version="1.0.0", selector=selector)
    return name


async def test_operator_controller_reaches_catalogd_and_the_registry_through_the_proxy(
    control_plane: ControlPlane,
    kube: Client,
    *,
    served: Served,
    remote: Remote,
    namespace: str,
    installer: Installer,
    tmp_path: Path,
) -> None:
    account = await installer(namespace)
    extensions = Extensions(kube)
    async with (
        tinyproxy.running(tmp_path / "proxy") as proxy,
        scoped_operator_controller(
            control_plane, tmp_path / "operator-controller", {"HTTPS_PROXY": proxy.url}
        ),
    ):
        try:
            name = await create_extension(extensions, namespace, account, served.name)
            await wait_installed(extensions, name, "1.0.0")
            assert proxy.requested(served.target) >= 1, proxy.log()
            assert proxy.requested(remote.registry.host) >= 1, proxy.log()
            print(
                f"proxy relayed {proxy.relayed(remote.address)} connections for one install "
                f"({proxy.requested(served.target)} CONNECTs to catalogd, "
                f"{proxy.requested(remote.registry.host)} to the registry)"
            )
        finally:
            for created in list(extensions.created):
                await extensions.delete_and_wait_gone(created)


async def test_an_unreachable_proxy_is_retried_and_named(
    control_plane: ControlPlane,
    kube: Client,
    *,
    served: Served,
    namespace: str,
    installer: Installer,
    tmp_path: Path,
) -> None:
    account = await installer(namespace)
    extensions = Extensions(kube)
    (closed,) = free_ports(1)  # nothing listens there: the connection to the proxy is refused
    proxy = f"http://127.0.0.1:{closed}"
    # catalogd's address and port bypass the proxy, the registry's (same address) does not: the
    # package resolves, and the bundle pull is what fails. (A catalog the proxy keeps out is
    # skipped by resolution and named, with the proxy's message, after the condition's.)
    env = {"HTTPS_PROXY": proxy, "NO_PROXY": served.target}
    async with scoped_operator_controller(control_plane, tmp_path / "operator-controller", env):
        try:
            name = await create_extension(extensions, namespace, account, served.name)
            await extensions.wait_condition(
                name,
                api.TYPE_PROGRESSING,
                "True",
                reason=api.REASON_RETRYING,
                message_contains=f"proxyconnect to proxy {proxy} failed: Connection refused",
                timeout=60,
            )
        finally:
            for created in list(extensions.created):
                await extensions.delete_and_wait_gone(created)
