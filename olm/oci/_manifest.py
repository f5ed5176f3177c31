"""Manifests and image indexes (OCI and Docker v2 media types), and picking one image from an index."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from olm.oci._digest import Digest
from olm.oci._errors import InvalidReference, NoMatchingPlatform, ProtocolError, UnsupportedMediaType

OCI_MANIFEST: Final = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX: Final = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST: Final = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_MANIFEST_LIST: Final = "application/vnd.docker.distribution.manifest.list.v2+json"
OCI_CONFIG: Final = "application/vnd.oci.image.config.v1+json"
DOCKER_CONFIG: Final = "application/vnd.docker.container.image.v1+json"

IMAGE_MANIFESTS: Final = frozenset({OCI_MANIFEST, DOCKER_MANIFEST})
INDEXES: Final = frozenset({OCI_INDEX, DOCKER_MANIFEST_LIST})
SCHEMA1: Final = frozenset(
    {
        "application/vnd.docker.distribution.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v1+prettyjws",
    }
)
"""Docker schema 1 manifests: never asked for (not in `ACCEPT`), but old registries send them anyway."""
ACCEPT: Final = ", ".join((OCI_INDEX, DOCKER_MANIFEST_LIST, OCI_MANIFEST, DOCKER_MANIFEST))
"""The `Accept` header of manifest requests: every manifest type this client reads."""

DEFAULT_PLATFORM: Final = ("linux", "amd64")


@dataclass(frozen=True, slots=True)
class Descriptor:
    """A pointer to content: media type, digest and size, plus what an index says about it."""

    media_type: str
    digest: Digest
    size: int
    platform: tuple[str, str] | None = None
    annotations: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, value: Any, where: str) -> Descriptor:
        if not isinstance(value, dict):
            raise ProtocolError(f"{where}: a descriptor must be an object")
        try:
            digest = Digest.parse(str(value.get("digest", "")))
        except InvalidReference as error:
            raise ProtocolError(f"{where}: {error}") from None
        size = value.get("size")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ProtocolError(f"{where}: descriptor size must be a non-negative integer")
        platform = value.get("platform")
        pair = None
        if isinstance(platform, dict):
            pair = (str(platform.get("os", "")), str(platform.get("architecture", "")))
        annotations = value.get("annotations") if isinstance(value.get("annotations"), dict) else {}
        return cls(str(value.get("mediaType", "")), digest, size, pair, dict(annotations or {}))


@dataclass(frozen=True, slots=True)
class ImageManifest:
    """One image: its config and its layers, in application order."""

    media_type: str
    config: Descriptor
    layers: tuple[Descriptor, ...]


@dataclass(frozen=True, slots=True)
class ImageIndex:
    """Several images (usually one per platform)."""

    media_type: str
    manifests: tuple[Descriptor, ...]

    def choose(self, platform: tuple[str, str] = DEFAULT_PLATFORM) -> Descriptor:
        """The entry for `platform`, else the only image entry; attestations are not images."""
        images = [d for d in self.manifests if d.platform != ("unknown", "unknown")]
        for descriptor in images:
            if descriptor.platform == platform:
                return descriptor
        if len(images) == 1:
            return images[0]
        found = sorted({"/".join(d.platform) for d in images if d.platform})
        raise NoMatchingPlatform(
            f"the image index has no {'/'.join(platform)} image and {len(images)} entries to choose from "
            f"(platforms: {', '.join(found) or 'none given'})"
        )


def parse(data: bytes, content_type: str | None) -> ImageManifest | ImageIndex:
    """Parse manifest bytes; the media type comes from the document, else from `content_type`."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ProtocolError("the manifest is not valid JSON") from None
    if not isinstance(document, dict):
        raise ProtocolError("the manifest is not a JSON object")
    media_type = str(document.get("mediaType") or bare(content_type) or "")
    if not media_type or media_type in ("application/json", "application/octet-stream"):
        media_type = OCI_INDEX if "manifests" in document else OCI_MANIFEST
    if document.get("schemaVersion") != 2:
        raise UnsupportedMediaType(
            f"manifest schemaVersion {document.get('schemaVersion')!r} is not supported (only 2)"
        )
    if media_type in INDEXES:
        entries = document.get("manifests")
        if not isinstance(entries, list):
            raise ProtocolError("the image index has no manifests list")
        return ImageIndex(media_type, tuple(Descriptor.from_json(e, "index entry") for e in entries))
    if media_type in IMAGE_MANIFESTS:
        layers = document.get("layers")
        if not isinstance(layers, list):
            raise ProtocolError("the image manifest has no layers list")
        config = Descriptor.from_json(document.get("config"), "config")
        return ImageManifest(media_type, config, tuple(Descriptor.from_json(e, "layer") for e in layers))
    raise UnsupportedMediaType(f"manifest media type {media_type!r} is not supported")


def bare(content_type: str | None) -> str:
    """A Content-Type without its parameters."""
    return (content_type or "").split(";", 1)[0].strip()
