"""Fixtures of the migration tests: OLM v0, as upstream releases it, on the session's control plane.

- `olm_v0` (this package): v0's CRDs, namespace `olm`, OLMConfig with copied CSVs disabled, and the olm
  and catalog operators as processes (`olm_testkit.olmv0.running`), started on first use;
- `v0_catalog` (this package): real bundles of kube-green, cat-facts-operator and etcd as an FBC with
  their manifests inline (checked with `opm validate`), served by `opm serve` and named by a global
  CatalogSource in `olm`;
- `v0_installs`: installs packages through v0 into namespaces of their own and removes them, with
  the CRDs they created, when the test ends.

When a test that uses `olm_v0` fails, its report carries both operators' logs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_testkit import olmv0
from olm_testkit.names import unique

V0_PACKAGES = ("kube-green", "cat-facts-operator", "etcd")
"""Real bundles with neither dependencies nor conversion webhooks, one for each install mode."""


@pytest.fixture(scope="package")
async def olm_v0(
    control_plane: ControlPlane,
    kube: Client,
    test_tool_binaries: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[olmv0.OlmV0]:
    workdir = tmp_path_factory.mktemp("olm-v0")
    async with olmv0.running(control_plane, kube, workdir, test_tool_binaries) as v0:
        yield v0


@dataclass(frozen=True)
class V0Catalog:
    """A catalog v0 serves Subscriptions of every namespace from."""

    name: str
    """The CatalogSource's name (in `olmv0.kinds.NAMESPACE`)."""
    address: str
    directory: Path
    """The FBC `opm serve` serves."""


@pytest.fixture(scope="package")
async def v0_catalog(
    olm_v0: olmv0.OlmV0, kube: Client, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[V0Catalog]:
    directory = olmv0.write_catalog(
        tmp_path_factory.mktemp("v0-catalog"), [olmv0.real_package(name) for name in V0_PACKAGES]
    )
    olmv0.validate(olm_v0.binary_dir / "opm", directory)
    address = await olm_v0.serve_catalog(directory)
    name = unique("v0-catalog")
    await olmv0.create_catalog_source(kube, name, address)
    try:
        yield V0Catalog(name=name, address=address, directory=directory)
    finally:
        await olmv0.delete_catalog_source(kube, name)


@dataclass
class V0Installs:
    """Installs from `v0_catalog` into fresh namespaces, and removes what v0 installed there (with
    the CRDs it created) at teardown, whether the install finished or not."""

    kube: Client
    catalog: V0Catalog
    namespaces: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)

    async def install(
        self,
        package: str,
        channel: str,
        *,
        mode: olmv0.InstallMode,
        approval: olmv0.Approval = olmv0.Approval.AUTOMATIC,
        starting_csv: str | None = None,
        source: str | None = None,
    ) -> olmv0.Installation:
        """Into `v0-<package>-<suffix>`; a SingleNamespace install watches `v0-watched-<suffix>`.
        `source` names another global CatalogSource (in `olm`) than `v0_catalog`'s."""
        namespace = unique(f"v0-{package}")
        target = unique("v0-watched") if mode is olmv0.InstallMode.SINGLE_NAMESPACE else None
        self.namespaces.append((namespace, (target,) if target else ()))
        request = olmv0.InstallRequest(
            package=package,
            channel=channel,
            source=source or self.catalog.name,
            mode=mode,
            target_namespace=target,
            approval=approval,
            starting_csv=starting_csv,
        )
        return await olmv0.install(self.kube, request, namespace=namespace)


@pytest.fixture
async def v0_installs(kube: Client, v0_catalog: V0Catalog) -> AsyncIterator[V0Installs]:
    installs = V0Installs(kube, v0_catalog)
    try:
        yield installs
    finally:
        for namespace, targets in reversed(installs.namespaces):
            await olmv0.uninstall(kube, namespace, target_namespaces=targets)
