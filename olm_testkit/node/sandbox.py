"""The Pod sandbox image: the pause program built here (`olm_testkit/gomod/pause`) as the only
file of an OCI image, `SANDBOX_IMAGE`, that containerd imports instead of pulling one."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

SANDBOX_IMAGE = "olm-py.local/pause:3.10"


def write_pause_archive(binary: Path, destination: Path) -> None:
    """An OCI archive of one image, `SANDBOX_IMAGE`: the pause program as its only file."""
    layer_buffer = io.BytesIO()
    with tarfile.open(fileobj=layer_buffer, mode="w", format=tarfile.PAX_FORMAT) as layer:
        info = tarfile.TarInfo("pause")
        data = binary.read_bytes()
        info.size, info.mode, info.mtime = len(data), 0o755, 0
        layer.addfile(info, io.BytesIO(data))
    layer_bytes = layer_buffer.getvalue()
    layer_digest = _sha256(layer_bytes)
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {"Entrypoint": ["/pause"]},
            "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
        }
    ).encode()
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": _sha256(config),
                "size": len(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest,
                    "size": len(layer_bytes),
                }
            ],
        }
    ).encode()
    index = json.dumps(
        {
            "schemaVersion": 2,
            "manifests": [
                {
                    "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "digest": _sha256(manifest),
                    "size": len(manifest),
                    "annotations": {
                        "io.containerd.image.name": SANDBOX_IMAGE,
                        "org.opencontainers.image.ref.name": SANDBOX_IMAGE.rpartition(":")[2],
                    },
                }
            ],
        }
    ).encode()
    with tarfile.open(destination, "w") as archive:
        files = {
            "oci-layout": b'{"imageLayoutVersion": "1.0.0"}',
            "index.json": index,
            **{f"blobs/sha256/{_sha256(blob)[7:]}": blob for blob in (layer_bytes, config, manifest)},
        }
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()
