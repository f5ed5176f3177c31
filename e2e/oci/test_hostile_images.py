"""Hostile catalog images served by the real `distribution` registry, unpacked the way catalogd does.

Each named case publishes one malformed or malicious image (manifest, index, config or layer) and
unpacks it with catalogd's `Unpacker` (pull through `olm.oci.RegistryClient`, then
`olm.oci.unpack_into`). The expected outcome is an error of a given type whose message contains a
given text, or a catalog on disk for the odd-but-legal shapes; either way no staging directory,
partial download or unverified blob is left behind.

What the registry refuses to store (manifests naming blobs it does not have, unknown manifest media
types, unsigned schema 1 manifests) is published by pushing a valid image and then deleting a blob
through the API, or by writing the manifest into the registry's storage directory, which is how an
old or broken registry ends up serving such content.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from olm import oci
from olm.catalogd.unpack import CONFIGS_LABEL, MissingConfigsLabel, Unpacker, UnpackError
from olm_runtime.testing.registry import Registry
from olm_testkit.images.layout import Blob
from olm_testkit.images.registry import RegistryClient as PushClient

pytestmark = pytest.mark.e2e

OCI_MANIFEST = oci.OCI_MANIFEST
OCI_INDEX = oci.OCI_INDEX
CONFIG = oci.OCI_CONFIG
TAR = "application/vnd.oci.image.layer.v1.tar"
GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"
MAX_BLOB = 1 << 20
MAX_MANIFEST = 4 << 10
MAX_CATALOG = 1 << 20
"""Limits of the client and unpacker under test, small so the oversized cases stay cheap."""


def tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


@dataclass
class Publisher:
    """Publishes one case's image in its own repository; content is unique to the case (`nonce`),
    so corrupting or deleting a blob never affects another test."""

    registry: Registry
    repository: str
    nonce: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def push(self) -> PushClient:
        return PushClient(host=self.registry.host, ca_file=self.registry.ca_file)

    @property
    def catalog(self) -> bytes:
        return json.dumps({"schema": "olm.package", "name": f"hostile-{self.nonce}"}).encode()

    def layer(self) -> bytes:
        """The usual catalog layer: `configs/catalog.json`, gzipped."""
        return gz(tar({"configs/catalog.json": self.catalog}))

    def config(self, labels: Any = None) -> bytes:
        labels = {CONFIGS_LABEL: "/configs"} if labels is None else labels
        return json.dumps({"config": {"Labels": labels}, "nonce": self.nonce}).encode()

    def blob(self, data: bytes, media_type: str = "application/octet-stream") -> dict[str, Any]:
        """Push `data`; its descriptor."""
        blob = Blob(media_type=media_type, data=data)
        self.push.push_blob(self.repository, blob)
        return blob.descriptor()

    def manifest(self, document: dict[str, Any], tag: str = "v1", content_type: str = OCI_MANIFEST) -> str:
        """Put a manifest or index under `tag`; the reference to pull."""
        status, _, body = self.push._request(
            "PUT",
            f"/v2/{self.repository}/manifests/{tag}",
            json.dumps(document).encode(),
            {"Content-Type": content_type},
        )
        assert status == 201, body
        return f"{self.registry.host}/{self.repository}:{tag}"

    def image(
        self,
        *,
        config: bytes | None = None,
        layers: list[tuple[str, bytes]] | None = None,
        change: Callable[[dict[str, Any]], None] = lambda _: None,
        tag: str = "v1",
        media_type: str = OCI_MANIFEST,
    ) -> str:
        """Push an image (by default a valid catalog image); `change` edits its manifest first."""
        layers = [(GZIP, self.layer())] if layers is None else layers
        document = {
            "schemaVersion": 2,
            "mediaType": media_type,
            "config": self.blob(self.config() if config is None else config, CONFIG),
            "layers": [self.blob(data, kind) for kind, data in layers],
        }
        change(document)
        return self.manifest(document, tag, media_type)

    def index(self, entries: list[dict[str, Any]], tag: str = "v1") -> str:
        return self.manifest(
            {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries}, tag, OCI_INDEX
        )

    def entry(self, platform: tuple[str, str], tag: str) -> dict[str, Any]:
        """An index entry for a valid catalog image pushed under `tag`."""
        self.image(tag=tag)
        data = self.push.manifest(self.repository, tag)
        return {
            "mediaType": OCI_MANIFEST,
            "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "platform": {"os": platform[0], "architecture": platform[1]},
        }

    def stored(self, digest: str) -> Path:
        """Where the registry keeps a blob's bytes."""
        hex_ = digest.split(":", 1)[1]
        return self.registry.state_dir / "data/docker/registry/v2/blobs/sha256" / hex_[:2] / hex_ / "data"

    def corrupt(self, digest: str) -> None:
        """Flip the first byte of a stored blob: same size, different content."""
        path = self.stored(digest)
        data = path.read_bytes()
        path.write_bytes(bytes([data[0] ^ 0xFF]) + data[1:])

    def delete_blob(self, digest: str) -> None:
        status, _, body = self.push._request("DELETE", f"/v2/{self.repository}/blobs/{digest}")
        assert status == 202, body

    def inject_manifest(self, body: bytes, tag: str = "v1") -> str:
        """Store manifest bytes under `tag` directly in the registry's storage, unvalidated."""
        digest = hashlib.sha256(body).hexdigest()
        self.stored(f"sha256:{digest}").parent.mkdir(parents=True, exist_ok=True)
        self.stored(f"sha256:{digest}").write_bytes(body)
        repository = self.registry.state_dir / "data/docker/registry/v2/repositories" / self.repository
        links = [
            repository / "_manifests/revisions/sha256" / digest,
            repository / "_manifests/tags" / tag / "current",
            repository / "_manifests/tags" / tag / "index/sha256" / digest,
        ]
        for link in links:
            link.mkdir(parents=True, exist_ok=True)
            (link / "link").write_text(f"sha256:{digest}")
        return f"{self.registry.host}/{self.repository}:{tag}"


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A manifest change: set `layers.0.size` and the like."""

    def change(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = document
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value

    return change


def _damaged(part: str, damage: Callable[[Publisher, str], None]) -> Callable[[Publisher], str]:
    """A valid image whose config or first layer (`part`) `damage` then spoils in the registry."""

    def build(p: Publisher) -> str:
        reference = p.image()
        manifest = json.loads(p.push.manifest(p.repository, "v1"))
        damage(p, manifest["config"]["digest"] if part == "config" else manifest["layers"][0]["digest"])
        return reference

    return build


def _tampered_manifest(p: Publisher) -> str:
    """A manifest edited in the registry's storage after it was pushed, still valid JSON."""
    reference = p.image(change=_set("annotations", {"note": "original"}))
    data = p.push.manifest(p.repository, "v1")
    stored = p.stored("sha256:" + hashlib.sha256(data).hexdigest())
    stored.write_bytes(data.replace(b"original", b"tampered"))
    return reference


def _malformed_digest(p: Publisher) -> str:
    """A layer descriptor whose digest is not one (the registry refuses to store it; an old one did)."""
    document = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": p.blob(p.config(), CONFIG),
        "layers": [{**p.blob(p.layer(), GZIP), "digest": "sha256:xyz"}],
    }
    return p.inject_manifest(json.dumps(document).encode())


def _schema1(p: Publisher) -> str:
    document = {"schemaVersion": 1, "name": p.repository, "tag": "v1", "architecture": "amd64"}
    return p.inject_manifest(json.dumps({**document, "fsLayers": [], "history": []}).encode())


def _index_of_index(p: Publisher) -> str:
    p.index([p.entry(("linux", "amd64"), "inner-image")], tag="inner")
    data = p.push._request("GET", f"/v2/{p.repository}/manifests/inner", None, {"Accept": OCI_INDEX})[2]
    entry = {
        "mediaType": OCI_INDEX,
        "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }
    return p.index([{**entry, "platform": {"os": "linux", "architecture": "amd64"}}])


def _attestations_only(p: Publisher) -> str:
    return p.index([p.entry(("unknown", "unknown"), "a1"), p.entry(("unknown", "unknown"), "a2")])


def _bomb(p: Publisher) -> bytes:
    """A 16 MiB catalog file of zeros, about 16 KiB gzipped: over `MAX_CATALOG` once unpacked."""
    return gz(tar({"configs/catalog.json": p.catalog, "configs/zeros.json": b"\0" * (16 << 20)}))


def _random(_: Publisher) -> bytes:
    return os.urandom(4096)


@dataclass(frozen=True)
class Case:
    id: str
    build: Callable[[Publisher], str]
    """Publish the image; the reference to unpack."""
    error: type[Exception] | None
    """None: the image unpacks to a catalog."""
    message: str = ""


def layers(*items: tuple[str, Callable[[Publisher], bytes]]) -> Callable[[Publisher], str]:
    """An image with these layers (media type, content built from the publisher)."""
    return lambda p: p.image(layers=[(kind, make(p)) for kind, make in items])


def config(make: Callable[[Publisher], bytes]) -> Callable[[Publisher], str]:
    return lambda p: p.image(config=make(p))


def changed(path: str, value: Any) -> Callable[[Publisher], str]:
    return lambda p: p.image(change=_set(path, value))


def _usual(p: Publisher) -> bytes:
    return p.layer()


def _plain(p: Publisher) -> bytes:
    return tar({"configs/catalog.json": p.catalog})


CASES_TABLE = [
    # manifests and indexes
    Case(
        "schema-1-manifest", _schema1, oci.UnsupportedMediaType, "Docker schema 1 manifests are not supported"
    ),
    Case(
        "manifest-too-large",
        changed("annotations", {"padding": "x" * MAX_MANIFEST}),
        oci.TooLarge,
        f"the manifest is larger than {MAX_MANIFEST} bytes",
    ),
    Case("manifest-tampered-in-storage", _tampered_manifest, oci.DigestMismatch, "the manifest hashes to"),
    Case("manifest-without-media-type", changed("mediaType", None), None),
    Case(
        "index-without-matching-platform",
        lambda p: p.index([p.entry(("linux", "s390x"), "s390x"), p.entry(("linux", "ppc64le"), "ppc64le")]),
        oci.NoMatchingPlatform,
        "has no linux/amd64 image and 2 entries to choose from (platforms: linux/ppc64le, linux/s390x)",
    ),
    Case("index-of-one-other-platform", lambda p: p.index([p.entry(("linux", "arm64"), "arm64")]), None),
    Case(
        "index-of-attestations-only", _attestations_only, oci.NoMatchingPlatform, "0 entries to choose from"
    ),
    Case("index-empty", lambda p: p.index([]), oci.NoMatchingPlatform, "0 entries to choose from"),
    Case("index-of-an-index", _index_of_index, oci.ProtocolError, "points at another index"),
    Case(
        "docker-v2-media-types",
        lambda p: p.image(layers=[(DOCKER_LAYER, p.layer())], media_type=oci.DOCKER_MANIFEST),
        None,
    ),
    # blobs: missing, corrupt, lying sizes, too large
    Case("layer-blob-missing", _damaged("layer", Publisher.delete_blob), oci.NotFound, "not found"),
    Case("config-blob-missing", _damaged("config", Publisher.delete_blob), oci.NotFound, "not found"),
    Case(
        "layer-digest-mismatch",
        _damaged("layer", Publisher.corrupt),
        oci.DigestMismatch,
        "blob content hashes to",
    ),
    Case(
        "config-digest-mismatch",
        _damaged("config", Publisher.corrupt),
        oci.DigestMismatch,
        "blob content hashes to",
    ),
    Case(
        "layer-longer-than-declared",
        changed("layers.0.size", 10),
        oci.SizeMismatch,
        "longer than the 10 bytes",
    ),
    Case(
        "layer-shorter-than-declared",
        changed("layers.0.size", 1 << 19),
        oci.SizeMismatch,
        "its descriptor says 524288",
    ),
    Case(
        "config-longer-than-declared", changed("config.size", 2), oci.SizeMismatch, "longer than the 2 bytes"
    ),
    Case(
        "layer-declared-over-the-limit",
        changed("layers.0.size", 5 << 30),
        oci.TooLarge,
        f"5368709120 bytes is over the limit of {MAX_BLOB}",
    ),
    Case(
        "layer-streamed-over-the-limit",
        lambda p: p.image(layers=[(TAR, os.urandom(MAX_BLOB + 1))], change=_set("layers.0.size", MAX_BLOB)),
        oci.SizeMismatch,
        f"longer than the {MAX_BLOB} bytes",
    ),
    Case(
        "descriptor-size-negative",
        changed("layers.0.size", -1),
        oci.ProtocolError,
        "size must be a non-negative integer",
    ),
    Case(
        "descriptor-digest-malformed",
        _malformed_digest,
        oci.ProtocolError,
        "'sha256:xyz' is not a valid sha256 digest",
    ),
    # layers
    Case(
        "layer-media-type-unknown",
        lambda p: p.image(layers=[("application/x-evil", p.layer())]),
        oci.UnsupportedMediaType,
        "layer media type 'application/x-evil' is not supported",
    ),
    Case(
        "layer-gzip-label-on-plain-tar",
        layers((GZIP, _plain)),
        oci.UnsupportedMediaType,
        "but is not compressed that way",
    ),
    Case("layer-plain-label-on-gzip", layers((TAR, _usual)), None),
    Case(
        "layer-zstd",
        layers((ZSTD, lambda p: b"\x28\xb5\x2f\xfd" + p.catalog)),
        oci.UnsupportedMediaType,  # zstandard is not a dependency
        "the 'zstandard' package is not installed",
    ),
    Case(
        "layer-truncated-gzip",
        layers((GZIP, lambda p: p.layer()[:-40])),
        UnpackError,
        "not a readable tar archive",
    ),
    Case(
        "layer-gzip-of-gzip",
        layers((GZIP, lambda p: gz(p.layer()))),
        UnpackError,
        "not a readable tar archive",
    ),
    Case("layer-random-bytes", layers((TAR, _random)), UnpackError, "not a readable tar archive"),
    Case("layer-empty", layers((TAR, lambda _: b"")), UnpackError, "not a readable tar archive"),
    Case(
        "layer-decompression-bomb",
        layers((GZIP, _bomb)),
        UnpackError,
        f"larger than the limit of {MAX_CATALOG} bytes",
    ),
    Case(
        "layer-gzip-of-zeros",
        layers((GZIP, lambda _: gz(b"\0" * (64 << 20)))),
        UnpackError,
        "'/configs' named by label",
    ),
    Case(
        "layer-path-traversal",
        layers(
            (TAR, lambda p: tar({"configs/catalog.json": p.catalog, "configs/../../../etc/cron.d/x": b"*"}))
        ),
        UnpackError,
        "'..' in a path is not allowed",
    ),
    Case("no-layers", lambda p: p.image(layers=[]), UnpackError, "is missing or empty"),
    # configs
    Case("config-not-json", config(lambda _: b"\x89PNG\r\n"), oci.ProtocolError, "is not valid JSON"),
    Case("config-a-json-list", config(lambda _: b"[]"), oci.ProtocolError, "is not a JSON object"),
    Case(
        "config-without-label", config(lambda p: p.config({})), MissingConfigsLabel, "is not a catalog image"
    ),
    Case(
        "config-labels-a-list",
        config(lambda p: p.config([CONFIGS_LABEL])),
        MissingConfigsLabel,
        "is not a catalog image",
    ),
    Case(
        "config-label-escapes",
        config(lambda p: p.config({CONFIGS_LABEL: "/configs/../../etc"})),
        UnpackError,
        "contains '..'",
    ),
    Case(
        "config-label-names-a-missing-directory",
        config(lambda p: p.config({CONFIGS_LABEL: "/nowhere"})),
        UnpackError,
        "'/nowhere' named by label",
    ),
]

CASES = len(CASES_TABLE)
ACCEPTED = [case.id for case in CASES_TABLE if case.error is None]


def _leftovers(root: Path) -> list[Path]:
    """Anything under `root` but the directories of finished unpacks and the cache's blobs."""
    found = []
    for path in root.rglob("*"):
        relative = path.relative_to(root).parts
        if relative[0] == "cache" and (len(relative) < 3 or relative[1] == "blobs"):
            continue  # the cache's own directories and verified blobs
        if relative[0] == "unpack" and len(relative) <= 2:
            continue  # the unpack root and the catalog's directory
        found.append(path)
    return found


@pytest.mark.parametrize("case", [pytest.param(case, id=case.id) for case in CASES_TABLE])
async def test_hostile_image(registry: Registry, tmp_path: Path, case: Case) -> None:
    publisher = Publisher(registry, f"e2e/hostile-{uuid.uuid4().hex[:8]}")
    reference = oci.Reference.parse(case.build(publisher))
    options = oci.ClientOptions(
        cache_dir=tmp_path / "cache",
        ca_files=(registry.ca_file,),
        max_blob_bytes=MAX_BLOB,
        max_manifest_bytes=MAX_MANIFEST,
        retry=oci.RetryPolicy(attempts=1),
    )
    async with oci.RegistryClient(options) as client:
        unpacker = Unpacker(client, tmp_path / "unpack", max_bytes=MAX_CATALOG)
        if case.error is None:
            unpacked = await unpacker.unpack("hostile", reference)
            assert (
                json.loads((unpacked.path / "catalog.json").read_bytes())["name"]
                == f"hostile-{publisher.nonce}"
            )
            assert [p.name for p in unpacked.path.parent.iterdir()] == [unpacked.path.name]
            return
        with pytest.raises(case.error) as caught:
            await unpacker.unpack("hostile", reference)
    assert case.message in str(caught.value)
    assert _leftovers(tmp_path) == []
