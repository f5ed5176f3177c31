"""Fault drill: catalogd's storage directory runs out of space.

catalogd runs with its `--storage-dir` on a size-limited tmpfs of the test's own. A small real
catalog is served; then a ballast file takes all but a little of the space and the ClusterCatalog
is pointed at a catalog that does not fit. Checked against the API server and the disk:

- `Progressing=True/Retrying` names the cause (no space left on device), `Serving` stays True on
  the previous digest, and the previous content is still served byte-identical;
- nothing half-written is left in the storage directory: no staging or temporary files, no
  unpacked leftovers, every stored file whole (its recorded hash and size match);
- once the ballast is deleted, the new catalog is served within one backoff of the controller
  (plus one reconcile's work; see `backoff`).

`OLMPY_SOAK=1` repeats the fill/free cycle with alternating large catalogs.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import os
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from e2e.faults import Figures
from e2e.faults.backoff import FAILURES, SOAK_FAILURES, LogMark, delay_after, outlast
from e2e.faults.catalogs import (
    community_subset,
    create_catalog,
    fixture_catalog_dir,
    served_bytes,
    wait_catalog,
)
from olm.api.kinds import CLUSTER_CATALOG
from olm.catalogd.storage import ALL, ALL_GZIP, CURRENT, INDEX, INFO
from olm_runtime import conditions
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import delete_catalog, push_catalog
from olm_testkit.images.layout import catalog_image
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess

CONTROLLER = "clustercatalog"
TMPFS_BYTES = 64 << 20
LEFT_FREE = 256 << 10
"""Free space the ballast leaves beyond what a stage needs (see `Large.leave`)."""
ONE_RECONCILE = 15.0
"""Allowance for the recovering reconcile itself (pull, unpack, parse, store) on a busy machine."""
LARGE = (("dell-csm-operator", "victoriametrics-operator"), ("konflux", "hive-operator"))
"""Community packages making each catalog that does not fit (several MiB of FBC each)."""
NO_SPACE = "No space left on device"
STAGES = ("download", "unpack", "store")


@pytest.fixture(scope="module")
def small_fs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """catalogd's work directory with `storage/` a tmpfs of `TMPFS_BYTES` (we run as root)."""
    workdir = tmp_path_factory.mktemp("catalogd-full")
    storage = workdir / "storage"
    storage.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs", str(storage)], check=True)
    try:
        yield workdir
    finally:
        if subprocess.run(["umount", str(storage)], check=False).returncode != 0:
            subprocess.run(["umount", "--lazy", str(storage)], check=True)


@pytest.fixture(scope="module")
async def catalogd(
    control_plane: ControlPlane, kube: Client, small_fs: Path
) -> AsyncIterator[CatalogdProcess]:
    process = CatalogdProcess(control_plane, small_fs, webhook=False, extra_args=("--log-format=json",))
    async with process.running():
        yield process


@dataclass(frozen=True)
class Large:
    """A catalog image that does not fit in `LEFT_FREE`."""

    ref: str
    layer_bytes: int
    fbc_bytes: int

    def leave(self, stage: str) -> int:
        """Free space to leave so the ingest runs out of it while downloading the image, while
        unpacking it (the image fits, its files do not) or while storing it (the image and its
        files fit, the stored JSON does not)."""
        needed = {"download": 0, "unpack": self.layer_bytes, "store": self.layer_bytes + self.fbc_bytes}
        return needed[stage] + LEFT_FREE


@dataclass(frozen=True)
class Images:
    small: str
    large: tuple[Large, ...]


@pytest.fixture(scope="module")
def images(registry: Registry, pusher: RegistryClient, tmp_path_factory: pytest.TempPathFactory) -> Images:
    prefix = f"{registry.host}/{unique('e2e-full')}"
    small = push_catalog(pusher, catalog_image(fixture_catalog_dir()), f"{prefix}/small:v1")
    large = []
    for i, packages in enumerate(LARGE):
        directory = community_subset(tmp_path_factory.mktemp("large"), packages)
        image = catalog_image(directory)
        ref = push_catalog(pusher, image, f"{prefix}/large-{i}:v1")
        fbc_bytes = sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())
        large.append(Large(ref, sum(len(layer.data) for layer in image.layers), fbc_bytes))
    return Images(small, tuple(large))


def fill(storage: Path, leave: int) -> Path:
    """A ballast file taking all free space of `storage` but `leave` bytes."""
    stats = os.statvfs(storage)
    free = stats.f_bavail * stats.f_frsize
    ballast = storage / "ballast"
    with ballast.open("wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, max(0, free - leave))
    return ballast


def debris(storage: Path, catalog: str) -> list[str]:
    """Whatever in `storage` is half-written or left over; empty when the directory is clean."""
    found: list[str] = []
    catalog_dir = storage / "catalogs" / catalog
    served = os.readlink(catalog_dir / CURRENT)
    for entry in sorted(catalog_dir.iterdir()):
        if entry.name not in (CURRENT, served):
            found.append(f"left over next to the served version: {entry}")
    version = catalog_dir / served
    info = orjson.loads((version / INFO).read_bytes())
    plain = (version / ALL).read_bytes()
    if hashlib.sha256(plain).hexdigest() != info["contentHash"] or len(plain) != info["size"]:
        found.append(f"{version / ALL} does not match its {INFO}")
    # The gzip form is written after the version is served: until then its absence is reported.
    if not (version / ALL_GZIP).exists():
        found.append(f"{version / ALL_GZIP} not written (yet)")
    elif gzip.decompress((version / ALL_GZIP).read_bytes()) != plain:
        found.append(f"{version / ALL_GZIP} is not {ALL} compressed")
    extra = sorted({p.name for p in version.iterdir()} - {ALL, ALL_GZIP, INDEX, INFO})
    if extra:
        found.append(f"left over in the served version: {extra}")
    unpacked = storage / "unpack" / catalog
    if unpacked.exists() and any(unpacked.iterdir()):
        found.append(f"unpacked leftovers: {sorted(p.name for p in unpacked.iterdir())}")
    found += [f"partial download: {p}" for p in (storage / "tmp").glob("*")]
    for blob in (storage / "blobs" / "sha256").glob("*"):
        if hashlib.sha256(blob.read_bytes()).hexdigest() != blob.name:
            found.append(f"corrupt blob: {blob}")
    return found


async def clean(storage: Path, catalog: str) -> None:
    found: list[str] = []

    async def nothing_left() -> bool:
        nonlocal found
        found = await asyncio.to_thread(debris, storage, catalog)
        return not found

    try:
        await eventually(nothing_left, what="a storage directory without debris", timeout=30, interval=0.05)
    except AssertionError as error:
        raise AssertionError(f"{error}: {found}") from None


async def test_storage_full_keeps_serving_and_recovers(
    kube: Client,
    catalogd: CatalogdProcess,
    images: Images,
    *,
    control_plane: ControlPlane,
    soak: bool,
    figures: Figures,
) -> None:
    storage = catalogd.storage_dir
    name = unique("e2e-full")
    await create_catalog(kube, name, images.small)
    try:
        serving = images.small
        await wait_catalog(kube, name, "serving the small catalog", serving_ref=serving)
        await clean(storage, name)  # its gzip form written too, before the disk fills
        cycles = 6 if soak else 3
        recoveries: list[tuple[str, int, float, float]] = []
        for cycle in range(cycles):
            found = dict(await kube.get(CLUSTER_CATALOG, name))
            base_url = found["status"]["urls"]["base"]
            before = await served_bytes(control_plane.ca_file, base_url)
            mark = LogMark.now(catalogd.log_file)
            large = images.large[cycle % len(images.large)]
            stage = STAGES[cycle % len(STAGES)]
            ballast = fill(storage, large.leave(stage))
            target = large.ref
            await kube.patch(CLUSTER_CATALOG, name, {"spec": {"source": {"image": {"ref": target}}}})

            failing = await wait_catalog(
                kube, name, "Retrying for lack of space", progressing="Retrying", message_contains=NO_SPACE
            )
            progressing = conditions.of(failing, "Progressing")
            assert progressing["status"] == "True", progressing
            assert conditions.of(failing, "Serving")["status"] == "True", failing["status"]
            assert failing["status"]["resolvedSource"]["image"]["ref"] == serving
            assert await served_bytes(control_plane.ca_file, base_url) == before
            await outlast(mark, CONTROLLER, name, SOAK_FAILURES if soak else FAILURES)
            # An attempt in progress has its staging files; between attempts nothing is left.
            await clean(storage, name)
            assert await served_bytes(control_plane.ca_file, base_url) == before
            failures = mark.failures(CONTROLLER, name)
            ballast.unlink()
            freed = time.monotonic()
            await wait_catalog(kube, name, "serving the large catalog", serving_ref=target, timeout=300)
            recovered = time.monotonic() - freed
            # Failures that happened while the ballast was deleted only shorten the wait.
            backoff = delay_after(failures)
            assert recovered <= backoff + ONE_RECONCILE, (recovered, backoff, failures)
            await clean(storage, name)
            recoveries.append((stage, failures, backoff, recovered))
            serving = target
        figures(
            {
                "cycles": cycles,
                "out of space while": [s for s, _, _, _ in recoveries],
                "ENOSPC failures before space was freed": [f for _, f, _, _ in recoveries],
                "backoff at that point (s)": [round(b, 2) for _, _, b, _ in recoveries],
                "recovery after space was freed (s)": [round(r, 2) for _, _, _, r in recoveries],
            }
        )
    finally:
        await delete_catalog(kube, name)
