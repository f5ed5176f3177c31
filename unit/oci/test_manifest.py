"""Manifests of both families parse; indexes pick linux/amd64 or their only image."""

from __future__ import annotations

import json
from typing import Any

import pytest

from olm import oci

D1 = "sha256:" + "1" * 64
D2 = "sha256:" + "2" * 64
D3 = "sha256:" + "3" * 64


def _manifest(media_type: str | None, **extra: Any) -> bytes:
    document: dict[str, Any] = {
        "schemaVersion": 2,
        "config": {"mediaType": oci.OCI_CONFIG, "digest": D1, "size": 10},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": D2, "size": 20}],
        **extra,
    }
    if media_type is not None:
        document["mediaType"] = media_type
    return json.dumps(document).encode()


def _entry(digest: str, os_: str, arch: str) -> dict[str, Any]:
    return {
        "mediaType": oci.OCI_MANIFEST,
        "digest": digest,
        "size": 1,
        "platform": {"os": os_, "architecture": arch},
    }


def _index(*entries: dict[str, Any]) -> oci.ImageIndex:
    document = {"schemaVersion": 2, "mediaType": oci.OCI_INDEX, "manifests": list(entries)}
    parsed = oci.parse_manifest(json.dumps(document).encode(), None)
    assert isinstance(parsed, oci.ImageIndex)
    return parsed


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        pytest.param(_manifest(oci.OCI_MANIFEST), None, id="oci-in-document"),
        pytest.param(_manifest(oci.DOCKER_MANIFEST), None, id="docker-in-document"),
        pytest.param(_manifest(None), oci.DOCKER_MANIFEST + "; charset=utf-8", id="docker-from-content-type"),
        pytest.param(_manifest(None), None, id="oci-by-shape"),
    ],
)
def test_image_manifests(data: bytes, content_type: str | None) -> None:
    manifest = oci.parse_manifest(data, content_type)
    assert isinstance(manifest, oci.ImageManifest)
    assert str(manifest.config.digest) == D1
    assert [(str(layer.digest), layer.size) for layer in manifest.layers] == [(D2, 20)]


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        pytest.param(b"nope", oci.ProtocolError, "not valid JSON", id="not-json"),
        pytest.param(
            _manifest(oci.OCI_MANIFEST, schemaVersion=1),
            oci.UnsupportedMediaType,
            "schemaVersion",
            id="schema-1",
        ),
        pytest.param(
            _manifest("application/vnd.example+json"),
            oci.UnsupportedMediaType,
            "not supported",
            id="unknown-type",
        ),
        pytest.param(
            _manifest(oci.OCI_MANIFEST, layers={}), oci.ProtocolError, "no layers list", id="bad-layers"
        ),
        pytest.param(
            _manifest(oci.OCI_MANIFEST, config={"digest": "sha256:short", "size": 1}),
            oci.ProtocolError,
            "config",
            id="bad-config-digest",
        ),
        pytest.param(
            _manifest(oci.OCI_MANIFEST, config={"digest": D1, "size": -1}),
            oci.ProtocolError,
            "size",
            id="negative-size",
        ),
    ],
)
def test_invalid_manifests(data: bytes, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        oci.parse_manifest(data, None)


def test_index_prefers_linux_amd64() -> None:
    index = _index(_entry(D1, "linux", "arm64"), _entry(D2, "linux", "amd64"), _entry(D3, "windows", "amd64"))
    assert str(index.choose().digest) == D2


def test_index_with_one_image_and_an_attestation_takes_the_image() -> None:
    index = _index(_entry(D1, "linux", "arm64"), _entry(D2, "unknown", "unknown"))
    assert str(index.choose().digest) == D1


def test_index_without_amd64_and_several_images_is_refused() -> None:
    index = _index(_entry(D1, "linux", "arm64"), _entry(D2, "linux", "s390x"))
    with pytest.raises(oci.NoMatchingPlatform, match=r"linux/amd64.*linux/arm64, linux/s390x"):
        index.choose()
