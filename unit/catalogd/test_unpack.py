"""Unpacking catalog images (from a registry at the HTTP seam): label, only the configs dir, reuse."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from olm import fbc, oci
from olm.catalogd import metrics
from olm.catalogd.content import Content, ContentError
from olm.catalogd.storage import Storage
from olm.catalogd.unpack import MissingConfigsLabel, Unpacker, UnpackError
from olm_testkit.images.layout import (
    CATALOG_CONFIGS_LABEL,
    CONFIG_MEDIA_TYPE,
    LAYER_MEDIA_TYPE,
    Blob,
    Image,
    catalog_image,
)
from unit.oci.fakeregistry import FakeRegistry, serve

PACKAGE = '{"schema":"olm.package","name":"p","defaultChannel":"stable"}\n'
CHANNEL = '{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1"}]}\n'
BUNDLE = (
    '{"schema":"olm.bundle","package":"p","name":"p.v1","image":"r.io/p:1",'
    '"properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}\n'
)


def tar(files: dict[str, str | None]) -> bytes:
    """A gzip layer; a `None` value makes a directory."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            if text is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                archive.addfile(info)
            else:
                data = text.encode()
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), mtime=0)


def image(*layers: bytes, labels: dict[str, str] | None = None) -> Image:
    config = {"architecture": "amd64", "os": "linux", "config": {"Labels": labels or {}}}
    return Image(
        config=Blob(media_type=CONFIG_MEDIA_TYPE, data=json.dumps(config).encode()),
        layers=tuple(Blob(media_type=LAYER_MEDIA_TYPE, data=layer) for layer in layers),
    )


@pytest.fixture
async def registry(tmp_path: Path) -> AsyncIterator[tuple[FakeRegistry, oci.RegistryClient]]:
    async with serve(FakeRegistry(), tmp_path) as (fake, ca):
        options = oci.ClientOptions(cache_dir=tmp_path / "blobs", ca_files=(ca,))
        async with oci.RegistryClient(options) as client:
            yield fake, client


def ref(fake: FakeRegistry, tag: str) -> oci.Reference:
    return oci.Reference.parse(f"{fake.host}/catalogs/demo:{tag}")


async def test_unpack_extracts_only_the_labelled_directory(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    layers = tar({"configs": None, "configs/p/catalog.json": PACKAGE + CHANNEL + BUNDLE, "bin/opm": "binary"})
    digest = fake.push("catalogs/demo", "v1", image(layers, labels={CATALOG_CONFIGS_LABEL: "/configs"}))
    unpacked = await Unpacker(client, tmp_path / "unpack").unpack("demo", ref(fake, "v1"))
    assert str(unpacked.reference) == f"{fake.host}/catalogs/demo@{digest}"
    assert sorted(p.relative_to(unpacked.path).as_posix() for p in unpacked.path.rglob("*")) == [
        "p",
        "p/catalog.json",
    ]
    assert [m.name for m in fbc.checked(fbc.iter_metas(unpacked.path))] == ["p", "stable", "p.v1"]


async def test_unpacked_digest_is_reused_without_pulling_blobs(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    fake.push("catalogs/demo", "v1", catalog_image(_fbc(tmp_path / "fbc")))
    unpacker = Unpacker(client, tmp_path / "unpack")
    first = await unpacker.unpack("demo", ref(fake, "v1"))
    blob_gets = fake.count("GET", "blobs")
    (first.path / "marker").write_text("still here")  # proves the directory is reused, not rebuilt
    second = await unpacker.unpack("demo", ref(fake, "v1"))
    assert second.path == first.path
    assert (second.path / "marker").exists()
    assert fake.count("GET", "blobs") == blob_gets


async def test_missing_label_is_a_clear_error(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    fake.push("catalogs/demo", "v1", image(tar({"configs/c.json": PACKAGE})))
    with pytest.raises(
        MissingConfigsLabel, match=r"is not a catalog image: .*operators\.operatorframework\.io"
    ):
        await Unpacker(client, tmp_path / "unpack").unpack("demo", ref(fake, "v1"))


async def test_label_naming_a_missing_directory(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    fake.push(
        "catalogs/demo",
        "v1",
        image(tar({"other/c.json": PACKAGE}), labels={CATALOG_CONFIGS_LABEL: "/configs"}),
    )
    with pytest.raises(UnpackError, match=r"'/configs' named by label .* is missing or empty"):
        await Unpacker(client, tmp_path / "unpack").unpack("demo", ref(fake, "v1"))
    assert not list((tmp_path / "unpack" / "demo").iterdir())  # no staging left, nothing half-unpacked


async def test_layers_apply_in_order_with_whiteouts(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    lower = tar(
        {"configs/p/catalog.json": PACKAGE + CHANNEL + BUNDLE, "configs/stale/catalog.json": "garbage"}
    )
    upper = tar({"configs/.wh.stale": ""})
    fake.push("catalogs/demo", "v1", image(lower, upper, labels={CATALOG_CONFIGS_LABEL: "/configs"}))
    unpacked = await Unpacker(client, tmp_path / "unpack").unpack("demo", ref(fake, "v1"))
    assert fbc.validate(fbc.iter_metas(unpacked.path)) == []
    assert not (unpacked.path / "stale").exists()


async def test_unsafe_layer_names_image_and_entry(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    fake.push(
        "catalogs/demo", "v1", image(tar({"configs/../x": "boom"}), labels={CATALOG_CONFIGS_LABEL: "configs"})
    )
    with pytest.raises(UnpackError, match=r"catalogs/demo@sha256:.*layer 0, entry 'configs/\.\./x'"):
        await Unpacker(client, tmp_path / "unpack").unpack("demo", ref(fake, "v1"))
    assert not list((tmp_path / "unpack" / "demo").iterdir())


async def test_cleanup_keeps_only_the_current_digest(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    unpacker = Unpacker(client, tmp_path / "unpack")
    fake.push("catalogs/demo", "v1", catalog_image(_fbc(tmp_path / "a")))
    old = await unpacker.unpack("demo", ref(fake, "v1"))
    fake.push("catalogs/demo", "v1", catalog_image(_fbc(tmp_path / "b", version="1.0.1")))
    new = await unpacker.unpack("demo", ref(fake, "v1"))
    assert old.path != new.path
    unpacker.cleanup("demo", keep=new.reference.digest)
    assert [p.name for p in (tmp_path / "unpack" / "demo").iterdir()] == [new.path.name]
    assert unpacker.catalogs() == ["demo"]
    unpacker.cleanup("demo")
    assert unpacker.catalogs() == []


async def test_unpack_then_store_serves_the_source_meta_for_meta(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    fake.push("catalogs/demo", "v1", catalog_image(_fbc(tmp_path / "fbc")))
    unpacked = await Unpacker(client, tmp_path / "unpack").unpack("demo", ref(fake, "v1"))
    storage = Storage(tmp_path / "store")
    digest = str(unpacked.reference.digest)
    stored = await storage.store("demo", digest, fbc.checked(fbc.iter_metas(unpacked.path)))
    source = [json.loads(line) for line in (PACKAGE + CHANNEL + BUNDLE).splitlines()]
    assert [json.loads(line) for line in stored.all_path.read_text().splitlines()] == source
    assert storage.contains("demo", digest)


def _fbc(root: Path, version: str = "1.0.0") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "catalog.json").write_text(PACKAGE + CHANNEL + BUNDLE.replace("1.0.0", version))
    return root


async def test_unpacks_are_timed_by_result_and_sized_once_per_digest(
    registry: tuple[FakeRegistry, oci.RegistryClient], tmp_path: Path
) -> None:
    fake, client = registry
    fake.push("catalogs/demo", "v1", catalog_image(_fbc(tmp_path / "fbc")))
    fake.push("catalogs/demo", "broken", image(tar({"configs/c.json": PACKAGE})))
    content = Content(client, Unpacker(client, tmp_path / "unpack"), Storage(tmp_path / "store"))

    def sample(name: str, labels: dict[str, str] | None = None) -> float:
        return metrics.REGISTRY.get_sample_value(name, labels or {}) or 0.0

    def counts() -> tuple[float, float, float]:
        duration = "catalogd_unpack_duration_seconds_count"
        return (
            sample(duration, {"result": "success"}),
            sample(duration, {"result": "error"}),
            sample("catalogd_unpack_size_bytes_sum"),
        )

    before = counts()
    ensured = await content.ensure("demo", await content.resolve(ref(fake, "v1")))
    again = await content.ensure("demo", await content.resolve(ref(fake, "v1")))  # served: no unpack
    with pytest.raises(ContentError, match="not a catalog image"):
        await content.ensure("other", await content.resolve(ref(fake, "broken")))
    after = counts()
    assert (ensured.unpacked, again.unpacked) == (True, False)
    assert after[0] - before[0] == 1
    assert after[1] - before[1] == 1
    assert after[2] - before[2] == ensured.stored.size > 0
