"""The image config, and the image written as an OCI layout directory or archive.

A layout directory (`oci-layout`, `index.json`, `blobs/sha256/...`) is what `buildah`, `skopeo` and
`podman` read with the `oci:DIR:NAME` transport; the archive is the same directory as one tar
(`oci-archive:FILE:NAME`, or `ctr image import --index-name`-style tools).
"""

from __future__ import annotations

import json
import os
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from olm_testkit.image import layer as layers
from olm_testkit.images import layout

REF_NAME_ANNOTATION = "org.opencontainers.image.ref.name"
CREATED = "1970-01-01T00:00:00Z"
"""The layers' fixed mtime: a build time would change the config digest on every build."""


def config_blob(
    *,
    diff_ids: Sequence[str],
    history: Sequence[str],
    labels: dict[str, str],
    user: str | None = None,
    env: Sequence[str] = (),
    entrypoint: Sequence[str] = (),
    cmd: Sequence[str] = (),
    working_dir: str = "/",
) -> layout.Blob:
    """An image config for linux/amd64; `history` holds one line per layer, saying what made it."""
    if len(history) != len(diff_ids):
        raise ValueError(f"{len(diff_ids)} layers but {len(history)} history entries")
    runtime: dict[str, object] = {"Env": list(env), "WorkingDir": working_dir}
    if user is not None:
        runtime["User"] = user
    if entrypoint:
        runtime["Entrypoint"] = list(entrypoint)
    if cmd:
        runtime["Cmd"] = list(cmd)
    if labels:
        runtime["Labels"] = dict(sorted(labels.items()))
    config = {
        "created": CREATED,
        "architecture": "amd64",
        "os": "linux",
        "config": runtime,
        "rootfs": {"type": "layers", "diff_ids": list(diff_ids)},
        "history": [{"created": CREATED, "created_by": line} for line in history],
    }
    return layout.Blob(
        media_type=layout.CONFIG_MEDIA_TYPE, data=json.dumps(config, separators=(",", ":")).encode()
    )


def write_layout(image: layout.Image, destination: Path, *, ref_name: str) -> None:
    """Write `image` as an OCI layout directory at `destination` (created or added to), naming it
    `ref_name` in `index.json`; other images already named there are kept."""
    blobs = destination / "blobs" / "sha256"
    blobs.mkdir(parents=True, exist_ok=True)
    (destination / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    for blob in (*image.layers, image.config):
        _write_blob(blobs, blob.digest, blob.data)
    _write_blob(blobs, image.digest, image.manifest)
    index_file = destination / "index.json"
    index: dict[str, Any] = (
        json.loads(index_file.read_text()) if index_file.exists() else {"schemaVersion": 2}
    )
    manifests = [
        m for m in index.get("manifests", []) if m.get("annotations", {}).get(REF_NAME_ANNOTATION) != ref_name
    ]
    manifests.append(
        {
            "mediaType": layout.MANIFEST_MEDIA_TYPE,
            "digest": image.digest,
            "size": len(image.manifest),
            "annotations": {REF_NAME_ANNOTATION: ref_name},
        }
    )
    index["manifests"] = manifests
    index_file.write_text(json.dumps(index, indent=2) + "\n")


def write_archive(image: layout.Image, destination: Path, *, ref_name: str) -> None:
    """Write `image` as an OCI archive: the layout directory as one uncompressed tar."""
    with tempfile.TemporaryDirectory(prefix="oci-layout-", dir=destination.parent) as scratch:
        root = Path(scratch)
        write_layout(image, root, ref_name=ref_name)
        partial = destination.with_name(destination.name + ".partial")
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
            for path in sorted(root.rglob("*")):
                tar.add(path, arcname=path.relative_to(root).as_posix(), recursive=False, filter=_normalized)
        partial.replace(destination)


def read_archive(source: Path, *, ref_name: str) -> layout.Image:
    """The image named `ref_name` in the OCI archive `source`, every blob checked against its digest,
    as `write_archive` writes it (one manifest, its config and gzip layers)."""
    with tarfile.open(source) as tar:

        def member(name: str) -> bytes:
            extracted = tar.extractfile(name)
            if extracted is None:
                raise ValueError(f"{source}: {name} is not a file")
            return extracted.read()

        def blob(digest: str) -> bytes:
            data = member(f"blobs/sha256/{digest.removeprefix('sha256:')}")
            if layout.sha256_digest(data) != digest:
                raise ValueError(f"{source}: blob {digest} does not match its digest")
            return data

        index = json.loads(member("index.json"))
        named = [
            m
            for m in index.get("manifests", [])
            if m.get("annotations", {}).get(REF_NAME_ANNOTATION) == ref_name
        ]
        if len(named) != 1:
            raise ValueError(f"{source}: {len(named)} images named {ref_name!r}, expected one")
        stored = blob(named[0]["digest"])
        manifest = json.loads(stored)
        config = manifest["config"]
        image = layout.Image(
            config=layout.Blob(media_type=config["mediaType"], data=blob(config["digest"])),
            layers=tuple(
                layout.Blob(media_type=layer["mediaType"], data=blob(layer["digest"]))
                for layer in manifest["layers"]
            ),
        )
    if image.manifest != stored:
        raise ValueError(f"{source}: the manifest of {ref_name!r} is not one this module writes")
    return image


def _normalized(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime = layers.MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def _write_blob(directory: Path, digest: str, data: bytes) -> None:
    target = directory / digest.removeprefix("sha256:")
    if target.exists() and target.stat().st_size == len(data):
        return
    partial = target.with_name(target.name + f".{os.getpid()}.partial")
    partial.write_bytes(data)
    partial.replace(target)
