"""The blob cache of a real catalogd keeps what catalogs reference and loses the rest.

This module runs its own catalogd with a garbage collection round every two seconds, so a round
follows each status change quickly; the rounds are what is under test, not their schedule.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from e2e.catalogd.conftest import Env, fetch_all, source_metas, write_catalog
from olm.api.kinds import CLUSTER_CATALOG
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_testkit.catalogs import cluster_catalog, push_catalog
from olm_testkit.images.layout import Image, catalog_image
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess


@pytest.fixture(scope="module")
async def catalogd(
    control_plane: ControlPlane, olm_crds: None, tmp_path_factory: pytest.TempPathFactory, kube: Client
) -> AsyncIterator[CatalogdProcess]:
    process = CatalogdProcess(
        control_plane, tmp_path_factory.mktemp("catalogd-prune"), extra_args=("--gc-interval=2",)
    )
    async with process.running():
        yield process


def _blobs(image: Image) -> set[str]:
    """The digests (`algorithm:hex`) catalogd caches for `image`: manifest, config, layers."""
    return {image.digest, image.config.digest, *(layer.digest for layer in image.layers)}


def _cached(env: Env) -> set[str]:
    root = env.catalogd.storage_dir / "blobs" / "blobs"
    return {f"{d.name}:{f.name}" for d in root.iterdir() for f in d.iterdir()}


async def test_blobs_of_an_image_a_catalog_left_are_pruned_and_the_new_ones_kept(
    env: Env, tmp_path: Path
) -> None:
    name, repo = unique("prune"), f"{env.registry.host}/{unique('e2e/prune')}"
    source_a = write_catalog(tmp_path / "a", "prune-pkg", ["1.0.0"])
    source_b = write_catalog(tmp_path / "b", "prune-pkg", ["1.0.0", "2.0.0"])
    image_a, image_b = catalog_image(source_a), catalog_image(source_b)
    ref_a = push_catalog(env.pusher, source_a, f"{repo}:a")
    ref_b = push_catalog(env.pusher, source_b, f"{repo}:b")
    assert ref_a.endswith(image_a.digest)
    assert ref_b.endswith(image_b.digest)
    only_a = _blobs(image_a) - _blobs(image_b)
    assert len(only_a) == 3  # each image has its own manifest, config and layer

    await env.catalogs.create(cluster_catalog(name, ref_a))
    await env.catalogs.wait_serving(name, ref_a)
    assert _blobs(image_a) <= _cached(env)

    await env.kube.patch(CLUSTER_CATALOG, name, {"spec": {"source": {"image": {"ref": ref_b}}}})
    served = await env.catalogs.wait_serving(name, ref_b)

    async def a_pruned() -> bool:
        return not (only_a & _cached(env))

    await eventually(a_pruned, what=f"the blobs of {ref_a} to be pruned", timeout=30)
    assert _blobs(image_b) <= _cached(env)
    base = served["status"]["urls"]["base"]
    assert await fetch_all(env.ca, base) == (200, source_metas(source_b))
    assert not list((env.catalogd.storage_dir / "blobs" / "trash").iterdir())

    await env.kube.delete(CLUSTER_CATALOG, name)

    async def b_pruned() -> bool:
        return not (_blobs(image_b) & _cached(env))

    await eventually(b_pruned, what=f"the blobs of deleted catalog {name} to be pruned", timeout=30)
