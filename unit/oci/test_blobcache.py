"""The blob cache keeps only verified, complete blobs; layers open by media type."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from olm import oci


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


def test_leftover_partial_downloads_are_removed_on_open(tmp_path: Path) -> None:
    oci.BlobCache(tmp_path)
    (tmp_path / "tmp" / "abc.partial").write_bytes(b"half")
    oci.BlobCache(tmp_path)
    assert not list((tmp_path / "tmp").iterdir())


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
    assert cache.prune([keep]) == 1
    assert list(cache.digests()) == [keep]


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
