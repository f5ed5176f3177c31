"""Unpacking a pulled image into a directory named after its digest, atomically and at most once.

`unpack_into(pulled, parent, options)` applies the image's layers (`apply_layers`, with its safety
rules) into `parent/.staging-<random>` on a worker thread, and renames that to
`parent/<algorithm>-<hex>` only once it is complete. A directory found at that path is therefore
whole, and is returned as is without reading a layer: unpacking a digest again (after a restart,
by another caller) costs nothing. Two unpacks of one digest at once both succeed; one rename wins.
What is left behind on failure is nothing: the staging directory is always removed.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import shutil
import tarfile
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from olm.oci._client import PulledImage
from olm.oci._digest import Digest
from olm.oci._errors import RegistryError
from olm.oci._extract import ExtractOptions, apply_layers
from olm.oci._layer import open_layer

_CORRUPT_LAYER = (tarfile.TarError, zlib.error, EOFError, gzip.BadGzipFile)
_WHOLE_IMAGE = ExtractOptions()


class CorruptLayer(RegistryError):
    """A layer is not a readable tar archive in the compression it declares."""


class EmptySelection(RegistryError):
    """The directory `ExtractOptions.select` names is missing from the image, or empty."""


def unpacked_path(parent: Path, digest: Digest) -> Path:
    """Where `unpack_into(pulled, parent)` puts the image with manifest digest `digest`."""
    return parent / f"{digest.algorithm}-{digest.hex}"


async def unpack_into(pulled: PulledImage, parent: Path, options: ExtractOptions = _WHOLE_IMAGE) -> Path:
    """The directory holding `pulled`'s files (its `options.select` directory, re-rooted), under
    `parent`; extracted now unless a finished unpack of the digest is there already.

    Raises `UnsafeContent` for an entry the extraction rules refuse, `CorruptLayer`, and
    `EmptySelection` when `options.select` is set and nothing under it was extracted.
    """
    digest = pulled.reference.digest
    if digest is None:  # the client always answers with the digest it resolved
        raise ValueError(f"{pulled.reference} names no digest")
    final = unpacked_path(parent, digest)
    if not final.is_dir():
        await asyncio.to_thread(_extract, pulled, final, options)
    return final


def _extract(pulled: PulledImage, final: Path, options: ExtractOptions) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = final.parent / f".staging-{uuid.uuid4().hex[:12]}"
    staging.mkdir()
    try:
        try:
            apply_layers(_layers(pulled), staging, options)
        except _CORRUPT_LAYER as error:
            raise CorruptLayer(
                "a layer is not a readable tar archive in its declared compression "
                f"({type(error).__name__}: {error})"
            ) from None
        if options.select and not any(staging.iterdir()):  # what the layers left, whiteouts applied
            raise EmptySelection(f"the directory {options.select!r} is missing or empty")
        try:
            os.rename(staging, final)
        except OSError:
            if not final.is_dir():  # else a concurrent unpack of the same digest won the rename
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _layers(pulled: PulledImage) -> Iterator[IO[bytes]]:
    """Open each layer as a tar stream in turn, closing the previous one."""
    for descriptor, path in pulled.layers:
        with open_layer(path, descriptor.media_type) as stream:
            yield stream
