"""Reproducible image content: one gzip layer from a directory, the config, the manifest."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

import yaml

MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_MEDIA_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"
CATALOG_CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"
BUNDLE_LABEL_PREFIX = "operators.operatorframework.io.bundle."


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, kw_only=True)
class Blob:
    media_type: str
    data: bytes

    @property
    def digest(self) -> str:
        return sha256_digest(self.data)

    def descriptor(self) -> dict[str, object]:
        return {"mediaType": self.media_type, "digest": self.digest, "size": len(self.data)}


@dataclass(frozen=True, kw_only=True)
class Image:
    config: Blob
    layers: tuple[Blob, ...]

    @property
    def manifest(self) -> bytes:
        manifest = {
            "schemaVersion": 2,
            "mediaType": MANIFEST_MEDIA_TYPE,
            "config": self.config.descriptor(),
            "layers": [layer.descriptor() for layer in self.layers],
        }
        return json.dumps(manifest, separators=(",", ":")).encode()

    @property
    def digest(self) -> str:
        return sha256_digest(self.manifest)


def _tar_directory(source: Path, prefix: str) -> bytes:
    """A tar of `source` placed under `prefix` in the image, with fixed owners, modes and times."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        parts = [p for p in prefix.strip("/").split("/") if p]
        for depth in range(1, len(parts) + 1):
            _add(tar, None, "/".join(parts[:depth]), is_dir=True)
        for path in sorted(source.rglob("*")):
            if path.is_symlink():
                raise ValueError(f"{path}: symbolic links are not packed into images")
            name = "/".join([*parts, *path.relative_to(source).parts])
            _add(tar, path, name, is_dir=path.is_dir())
    return buffer.getvalue()


def _add(tar: tarfile.TarFile, path: Path | None, name: str, *, is_dir: bool) -> None:
    info = tarfile.TarInfo(name + ("/" if is_dir else ""))
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    if is_dir:
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
        return
    assert path is not None
    data = path.read_bytes()
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def image_from_directory(source: Path, *, prefix: str, labels: dict[str, str]) -> Image:
    """An image with one layer holding `source` under `prefix` and the given config labels."""
    if not source.is_dir():
        raise ValueError(f"{source} is not a directory")
    tar = _tar_directory(source, prefix)
    layer = Blob(media_type=LAYER_MEDIA_TYPE, data=gzip.compress(tar, mtime=0))
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Labels": dict(sorted(labels.items()))},
        "rootfs": {"type": "layers", "diff_ids": [sha256_digest(tar)]},
        "history": [{"created_by": "hack/images", "comment": f"content under /{prefix.strip('/')}"}],
    }
    config_blob = Blob(media_type=CONFIG_MEDIA_TYPE, data=json.dumps(config, separators=(",", ":")).encode())
    return Image(config=config_blob, layers=(layer,))


def catalog_image(fbc_dir: Path) -> Image:
    """A File-Based Catalog image: `fbc_dir` becomes `/configs`."""
    return image_from_directory(fbc_dir, prefix="configs", labels={CATALOG_CONFIGS_LABEL: "/configs"})


def bundle_image(bundle_dir: Path) -> Image:
    """A registry+v1 bundle image: `manifests/` and `metadata/` at the root, labels from the annotations."""
    annotations_file = bundle_dir / "metadata" / "annotations.yaml"
    if not annotations_file.is_file():
        raise ValueError(f"{bundle_dir} is not a registry+v1 bundle: metadata/annotations.yaml is missing")
    document = yaml.safe_load(annotations_file.read_text()) or {}
    annotations = document.get("annotations") or {}
    labels = {str(k): str(v) for k, v in annotations.items() if str(k).startswith(BUNDLE_LABEL_PREFIX)}
    return image_from_directory(bundle_dir, prefix="", labels=labels)
