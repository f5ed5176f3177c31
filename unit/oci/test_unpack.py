"""Unpacking into a digest directory: atomic, reused, nothing left behind on failure."""

from __future__ import annotations

import asyncio
import gzip
import io
import tarfile
from pathlib import Path

import pytest

from olm import oci

GZIP_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def tar(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), mtime=0)


def pulled(tmp_path: Path, *layers: bytes) -> oci.PulledImage:
    """An image as the client hands it over: verified layer blobs on disk."""
    descriptors: list[tuple[oci.Descriptor, Path]] = []
    for data in layers:
        digest = oci.Digest.of(data)
        blob = tmp_path / "blobs" / digest.hex
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        descriptors.append((oci.Descriptor(GZIP_LAYER, digest, len(data)), blob))
    config = oci.Descriptor("application/vnd.oci.image.config.v1+json", oci.Digest.of(b"{}"), 2)
    manifest = oci.ImageManifest(oci.OCI_MANIFEST, config, tuple(d for d, _ in descriptors))
    digest = oci.Digest.of(b"".join(layers))
    return oci.PulledImage(
        reference=oci.Reference.parse(f"localhost:5000/images/demo@{digest}"),
        manifest=manifest,
        config={},
        layers=tuple(descriptors),
    )


async def test_the_image_lands_in_a_directory_named_after_its_digest(tmp_path: Path) -> None:
    image = pulled(tmp_path, tar({"configs/a.json": "{}", "bin/tool": "x"}))
    path = await oci.unpack_into(image, tmp_path / "unpack", oci.ExtractOptions(select="configs"))
    assert image.reference.digest is not None
    assert path == oci.unpacked_path(tmp_path / "unpack", image.reference.digest)
    assert path.name == f"sha256-{image.reference.digest.hex}"
    assert sorted(p.name for p in path.iterdir()) == ["a.json"]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no staging left


async def test_a_finished_unpack_is_reused_without_reading_a_layer(tmp_path: Path) -> None:
    image = pulled(tmp_path, tar({"a.json": "{}"}))
    first = await oci.unpack_into(image, tmp_path / "unpack")
    (first / "marker").write_text("still here")
    for _, blob in image.layers:
        blob.unlink()  # a second extraction would fail
    assert await oci.unpack_into(image, tmp_path / "unpack") == first
    assert (first / "marker").exists()


async def test_two_unpacks_of_one_digest_at_once_both_succeed(tmp_path: Path) -> None:
    image = pulled(tmp_path, tar({f"f{i}.json": "{}" for i in range(50)}))
    first, second = await asyncio.gather(
        oci.unpack_into(image, tmp_path / "unpack"), oci.unpack_into(image, tmp_path / "unpack")
    )
    assert first == second
    assert len(list(first.iterdir())) == 50
    assert [p.name for p in first.parent.iterdir()] == [first.name]


async def test_an_empty_selection_stores_nothing(tmp_path: Path) -> None:
    image = pulled(tmp_path, tar({"other/a.json": "{}"}))
    with pytest.raises(oci.EmptySelection, match="'/configs' is missing or empty"):
        await oci.unpack_into(image, tmp_path / "unpack", oci.ExtractOptions(select="/configs"))
    assert not list((tmp_path / "unpack").iterdir())


async def test_an_unsafe_entry_stores_nothing(tmp_path: Path) -> None:
    image = pulled(tmp_path, tar({"configs/../x": "boom"}))
    with pytest.raises(oci.UnsafeContent, match=r"layer 0, entry 'configs/\.\./x'"):
        await oci.unpack_into(image, tmp_path / "unpack", oci.ExtractOptions(select="configs"))
    assert not list((tmp_path / "unpack").iterdir())


async def test_a_corrupt_layer_is_named_as_such(tmp_path: Path) -> None:
    image = pulled(tmp_path, gzip.compress(b"not a tar archive" * 100, mtime=0))
    with pytest.raises(oci.CorruptLayer, match="not a readable tar archive in its declared compression"):
        await oci.unpack_into(image, tmp_path / "unpack")
    assert not list((tmp_path / "unpack").iterdir())
