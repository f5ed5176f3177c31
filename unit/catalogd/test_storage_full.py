"""Storage on a full filesystem: whatever step runs out of space or inodes, the served version
stays served and nothing else is left in the catalog's directory.

A real tmpfs, limited in inodes (each file, directory and symlink takes one, so every step of a
store fails at some limit) or in bytes; mounting it needs root, so the tests skip without it.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from olm.catalogd.storage import ALL, CURRENT, INDEX, INFO, Storage
from unit.catalogd.test_storage import catalog, metas

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def mount(tmp_path: Path) -> Iterator[Path]:
    """A directory to mount tmpfs filesystems on (`fresh_tmpfs`); unmounted at the end."""
    target = tmp_path / "fs"
    target.mkdir()
    yield target
    subprocess.run(["umount", str(target)], check=False, capture_output=True)


class FirstStoreFailed(Exception):
    pass


def fresh_tmpfs(target: Path, options: str) -> None:
    subprocess.run(["umount", str(target)], check=False, capture_output=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], check=False, capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")


def entries(storage: Storage, name: str) -> list[str]:
    return sorted(p.name for p in (storage.root / name).iterdir())


async def store_twice(target: Path, options: str) -> tuple[Storage, OSError | None]:
    """Store a small catalog, then a larger one, on a fresh tmpfs; the second store's error.
    Raises `FirstStoreFailed` when not even the small one fits."""
    fresh_tmpfs(target, options)
    storage = Storage(target / "catalogs")
    try:
        await storage.store("c", D1, metas(catalog()))
    except OSError as error:
        raise FirstStoreFailed from error
    try:
        await storage.store("c", D2, metas(catalog(versions=tuple(f"1.0.{i}" for i in range(400)))))
    except OSError as error:
        return storage, error
    return storage, None


def assert_first_version_alone(storage: Storage) -> None:
    served = storage.get("c")
    assert served is not None
    assert served.digest == D1
    assert entries(storage, "c") == sorted([CURRENT, served.directory.name])
    assert served.all_path.read_bytes() == b"".join(m.blob + b"\n" for m in metas(catalog()))


def test_every_step_out_of_inodes_leaves_the_served_version_alone(mount: Path) -> None:
    failures = 0
    for inodes in range(8, 40):
        try:
            storage, error = asyncio.run(store_twice(mount, f"size=4m,nr_inodes={inodes}"))
        except FirstStoreFailed:
            continue
        if error is None:
            served = storage.get("c")
            assert served is not None
            assert served.digest == D2
            assert entries(storage, "c") == sorted([CURRENT, served.directory.name])
            break
        assert error.strerror == "No space left on device", error
        assert_first_version_alone(storage)
        failures += 1
    else:
        pytest.fail("the second store never fitted")
    # The staging directory, each of its three files and the new `current` link each failed once
    # (the gzip form is written after the store, see the test below).
    assert failures >= 5


def test_out_of_bytes_leaves_the_served_version_alone(mount: Path) -> None:
    storage, error = asyncio.run(store_twice(mount, "size=64k"))
    assert error is not None
    assert error.strerror == "No space left on device"
    assert_first_version_alone(storage)


def test_compressing_on_a_full_disk_leaves_the_version_served_as_it_is(mount: Path) -> None:
    async def store_then_fill() -> Storage:
        fresh_tmpfs(mount, "size=4m")
        storage = Storage(mount / "catalogs")
        await storage.store("c", D1, metas(catalog()))
        # The compression is scheduled, not started: take all the space it would need first.
        ballast = mount / "ballast"
        with ballast.open("wb") as handle:
            free = os.statvfs(mount).f_bavail * os.statvfs(mount).f_frsize
            os.posix_fallocate(handle.fileno(), 0, free)
        await storage.wait_compressed()
        return storage

    storage = asyncio.run(store_then_fill())
    served = storage.get("c")
    assert served is not None
    assert served.gzip_size() is None
    assert sorted(p.name for p in served.directory.iterdir()) == sorted([ALL, INDEX, INFO])
    assert served.all_path.read_bytes() == b"".join(m.blob + b"\n" for m in metas(catalog()))
