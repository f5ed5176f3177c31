"""Opening a layer blob as an uncompressed tar stream, by media type.

gzip is built in. zstd is read when the `zstandard` package is importable (it is not a dependency
of this project); otherwise a zstd layer is refused with an error that says so. Compression is
also sniffed from the magic bytes, because some registries label gzip layers as plain tar.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO, Any, Final

from olm.oci._errors import UnsupportedMediaType

_TAR: Final = frozenset(
    {
        "application/vnd.oci.image.layer.v1.tar",
        "application/vnd.oci.image.layer.nondistributable.v1.tar",
        "application/vnd.docker.image.rootfs.diff.tar",
    }
)
_GZIP: Final = frozenset(
    {
        "application/vnd.oci.image.layer.v1.tar+gzip",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
        "application/vnd.docker.image.rootfs.diff.tar.gzip",
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
    }
)
_ZSTD: Final = frozenset(
    {
        "application/vnd.oci.image.layer.v1.tar+zstd",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
    }
)
LAYER_MEDIA_TYPES: Final = _TAR | _GZIP | _ZSTD
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def zstd_available() -> bool:
    try:
        import zstandard  # type: ignore[import-not-found]  # noqa: F401, PLC0415
    except ImportError:
        return False
    return True


def open_layer(path: Path, media_type: str) -> IO[bytes]:
    """The uncompressed tar stream of the layer blob at `path` (caller closes it)."""
    if media_type not in LAYER_MEDIA_TYPES:
        raise UnsupportedMediaType(f"layer media type {media_type!r} is not supported")
    raw = path.open("rb")
    magic = raw.read(4)
    raw.seek(0)
    if magic.startswith(_GZIP_MAGIC):
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if magic == _ZSTD_MAGIC:
        return _open_zstd(raw, media_type)
    if media_type in _GZIP or media_type in _ZSTD:
        raw.close()
        raise UnsupportedMediaType(f"the layer is labelled {media_type!r} but is not compressed that way")
    return raw


def _open_zstd(raw: IO[bytes], media_type: str) -> IO[bytes]:
    try:
        import zstandard  # noqa: PLC0415  # type: ignore[import-not-found]
    except ImportError:
        raw.close()
        raise UnsupportedMediaType(
            f"layer media type {media_type!r} (zstd) is not supported: "
            "the 'zstandard' package is not installed"
        ) from None
    reader: Any = zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
    return reader  # type: ignore[no-any-return]
