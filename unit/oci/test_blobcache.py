"""The blob cache keeps only verified, complete blobs; layers open by media type."""

from __future__ import annotations

import gzip
import io
import os
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from olm import oci
from olm.oci._blobcache import STALE_PARTIAL_SECONDS


def _digest(data: bytes) -> oci.Digest:
    return oci.Digest.of(data)


def test_streamed_blob_is_verified_then_moved_into_place(tmp_path: Path) -> None:
    cache = oci.BlobCache(tmp_path)
    data = b"x" * 100_000
    writer = cache.writer(_digest(data), expected_size=len(data), max_size=1 << 20)
    for start in range(0, len(data), 4096):
        writer.write(data[start : start + 4096])
    assert cache.get(_digest(data)) is None  # not visible before commit
    path = writer.commit()
    assert path == cache.path(_digest(data))
    assert path.read_bytes() == data
    assert cache.get(_digest(data), len(data)) == path
    assert cache.get(_digest(data), len(data) + 1) is None


def test_wrong_content_never_enters_the_cache(tmp_path: Path) -> None:
    cache = oci.BlobCache(tmp_path)
    digest = _digest(b"expected")
    writer = cache.writer(digest, expected_size=8, max_size=100)
    writer.write(b"tampered")
    with pytest.raises(oci.DigestMismatch, match="hashes to sha256:"):
        writer.commit()
    assert cache.get(digest) is None
    assert not list((tmp_path / "tmp").iterdir())


@pytest.mark.parametrize(
    ("expected_size", "max_size", "error"),
    [
        pytest.param(4, 100, oci.SizeMismatch, id="longer-than-descriptor"),
        pytest.param(None, 4, oci.TooLarge, id="over-the-cap"),
    ],
)
def test_size_is_checked_while_streaming(
    tmp_path: Path, expected_size: int | None, max_size: int, error: type[Exception]
) -> None:
    cache = oci.BlobCache(tmp_path)
    writer = cache.writer(_digest(b"12345678"), expected_size=expected_size, max_size=max_size)
    with pytest.raises(error):
        writer.write(b"12345678")
    writer.abort()
    assert not list((tmp_path / "tmp").iterdir())


def test_abandoned_partial_downloads_are_removed_on_open(tmp_path: Path) -> None:
    oci.BlobCache(tmp_path)
    abandoned = tmp_path / "tmp" / "abc.partial"
    abandoned.write_bytes(b"half")
    old = time.time() - STALE_PARTIAL_SECONDS - 60
    os.utime(abandoned, (old, old))
    oci.BlobCache(tmp_path)
    assert not list((tmp_path / "tmp").iterdir())


def test_opening_the_cache_spares_another_process_download(tmp_path: Path) -> None:
    """Two processes sharing a cache: the second opening it must not delete the first one's
    download in progress (its commit would then fail)."""
    first = oci.BlobCache(tmp_path)
    data = b"layer" * 1000
    writer = first.writer(_digest(data), expected_size=len(data), max_size=1 << 20)
    writer.write(data[:100])
    oci.BlobCache(tmp_path)  # the other process starting
    writer.write(data[100:])
    assert writer.commit().read_bytes() == data


def test_read_re_verifies_small_blobs(tmp_path: Path) -> None:
    cache = oci.BlobCache(tmp_path)
    digest = _digest(b"{}")
    cache.put(digest, b"{}", max_size=10)
    assert cache.read(digest, max_size=10) == b"{}"
    cache.path(digest).write_bytes(b"[]")  # bit rot, or a hand edit
    assert cache.read(digest, max_size=10) is None
    assert cache.get(digest) is None


def test_prune_keeps_only_what_is_asked(tmp_path: Path) -> None:
    cache = oci.BlobCache(tmp_path)
    keep, drop = _digest(b"keep"), _digest(b"drop")
    cache.put(keep, b"keep", max_size=10)
    cache.put(drop, b"drop", max_size=10)
    assert sorted(map(str, cache.digests())) == sorted([str(keep), str(drop)])
    assert cache.prune([keep]) == [drop]
    assert list(cache.digests()) == [keep]
    assert not list((tmp_path / "trash").iterdir())


def _filled(root: Path, count: int) -> tuple[oci.BlobCache, list[oci.Digest], list[oci.Digest]]:
    """A cache of `count` blobs; every third is to be kept."""
    cache = oci.BlobCache(root)
    digests = []
    for i in range(count):
        data = b"blob %d" % i
        cache.put(_digest(data), data, max_size=64)
        digests.append(_digest(data))
    return cache, digests[::3], [d for i, d in enumerate(digests) if i % 3]


def _assert_only_whole_blobs(cache: oci.BlobCache, kept: list[oci.Digest]) -> None:
    for digest in cache.digests():
        assert oci.Digest.of(cache.path(digest).read_bytes()) == digest, f"{digest} is not whole"
    assert set(kept) <= set(cache.digests())


_PRUNE_KILLED_AT = """
import os, signal, sys
from pathlib import Path
from olm import oci

root, keep_file, kill_at = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
keep = [oci.Digest.parse(line) for line in keep_file.read_text().split()]
renames = 0
real_rename = os.rename

def rename_then_die(source, target):
    global renames
    real_rename(source, target)
    renames += 1
    if renames == kill_at:  # the blob is in trash/, not deleted yet: die the hardest way
        os.kill(os.getpid(), signal.SIGKILL)

os.rename = rename_then_die
oci.BlobCache(root).prune(keep)
"""


@pytest.mark.parametrize(
    "kill_at",
    [
        pytest.param(1, id="after-the-first-rename"),
        pytest.param(7, id="midway"),
        pytest.param(20, id="after-the-last-rename"),
    ],
)
def test_prune_killed_at_any_point_leaves_a_working_cache(tmp_path: Path, kill_at: int) -> None:
    cache, kept, dropped = _filled(tmp_path / "cache", 30)
    assert len(dropped) == 20
    keep_file = tmp_path / "keep"
    keep_file.write_text("\n".join(map(str, kept)))
    run = subprocess.run(
        [sys.executable, "-c", _PRUNE_KILLED_AT, str(cache.root), str(keep_file), str(kill_at)],
        check=False,
        capture_output=True,
    )
    assert run.returncode == -signal.SIGKILL, run.stderr.decode()
    assert len(list((cache.root / "trash").iterdir())) == 1  # the blob it was deleting
    left = set(cache.digests()) - set(kept)
    assert len(left) == len(dropped) - kill_at
    _assert_only_whole_blobs(cache, kept)

    reopened = oci.BlobCache(cache.root)  # the restart
    assert not list((cache.root / "trash").iterdir())
    assert set(reopened.prune(kept)) == left
    assert sorted(map(str, reopened.digests())) == sorted(map(str, kept))
    _assert_only_whole_blobs(reopened, kept)


def test_a_blob_pruned_then_needed_again_is_downloaded_again(tmp_path: Path) -> None:
    cache, kept, dropped = _filled(tmp_path, 6)
    cache.prune(kept)
    assert cache.get(dropped[0]) is None  # a miss, so the client fetches it again
    cache.put(dropped[0], b"blob 1", max_size=64)
    assert cache.read(dropped[0], max_size=64) == b"blob 1"


def _tar(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("media_type", "compress"),
    [
        pytest.param("application/vnd.oci.image.layer.v1.tar+gzip", True, id="oci-gzip"),
        pytest.param("application/vnd.docker.image.rootfs.diff.tar.gzip", True, id="docker-gzip"),
        pytest.param("application/vnd.oci.image.layer.v1.tar", False, id="oci-tar"),
        pytest.param("application/vnd.oci.image.layer.v1.tar", True, id="gzip-labelled-as-tar"),
    ],
)
def test_layers_open_as_tar_streams(tmp_path: Path, media_type: str, compress: bool) -> None:
    tar = _tar("configs/a.json", b"{}")
    path = tmp_path / "layer"
    path.write_bytes(gzip.compress(tar) if compress else tar)
    with oci.open_layer(path, media_type) as stream:
        assert stream.read() == tar


def test_unknown_layer_media_type_is_refused(tmp_path: Path) -> None:
    (tmp_path / "layer").write_bytes(b"")
    with pytest.raises(oci.UnsupportedMediaType, match="not supported"):
        oci.open_layer(tmp_path / "layer", "application/vnd.example.helm.chart")


def test_gzip_label_on_uncompressed_data_is_refused(tmp_path: Path) -> None:
    (tmp_path / "layer").write_bytes(_tar("a", b"x"))
    with pytest.raises(oci.UnsupportedMediaType, match="not compressed that way"):
        oci.open_layer(tmp_path / "layer", "application/vnd.oci.image.layer.v1.tar+gzip")


@pytest.mark.skipif(oci.zstd_available(), reason="the zstandard package is installed")
def test_zstd_without_the_library_says_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "layer").write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 16)
    with pytest.raises(oci.UnsupportedMediaType, match="'zstandard' package is not installed"):
        oci.open_layer(tmp_path / "layer", "application/vnd.oci.image.layer.v1.tar+zstd")
