"""Unpacking a catalog image: pull it, find its File-Based Catalog, extract only that directory.

The image config label `operators.operatorframework.io.index.configs.v1` names the catalog
directory inside the image (usually `/configs`). That directory, and nothing else, is extracted
with the safety rules of `olm.oci.apply_layers` (no traversal, no absolute paths, no links out,
no devices, a size cap) into a staging directory, which is renamed into
`<root>/<catalog>/<digest>` only once complete. A directory that exists there is therefore whole,
and is reused as is: unpacking the same digest again (after a restart, say) pulls nothing but the
tag resolution and extracts nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import shutil
import tarfile
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from olm import oci
from olm.catalogd.storage import is_valid_name

CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"
DEFAULT_MAX_CATALOG_BYTES = 2 << 30


_CORRUPT_LAYER = (tarfile.TarError, zlib.error, EOFError, gzip.BadGzipFile)


class UnpackError(Exception):
    """The image cannot be turned into a catalog; the message says what to change."""


class MissingConfigsLabel(UnpackError):
    """The image is not a catalog image: it lacks the label naming its catalog directory."""


@dataclass(frozen=True, slots=True)
class Unpacked:
    """A catalog directory on disk and the image it came from."""

    reference: oci.Reference
    """The image, by digest (what `status.resolvedSource.image.ref` reports)."""
    path: Path
    """The File-Based Catalog root (the image's configs directory, re-rooted)."""
    configs_dir: str
    """The value of the configs label."""


class Unpacker:
    """Unpacks catalog images under `root`, one directory per catalog and digest."""

    def __init__(self, client: oci.RegistryClient, root: Path, *, max_bytes: int = DEFAULT_MAX_CATALOG_BYTES):
        self.client = client
        self.root = root
        self.max_bytes = max_bytes
        root.mkdir(parents=True, exist_ok=True)

    def path(self, catalog: str, digest: oci.Digest) -> Path:
        if not is_valid_name(catalog):
            raise ValueError(f"invalid catalog name {catalog!r}: must be a DNS-1123 subdomain")
        return self.root / catalog / f"{digest.algorithm}-{digest.hex}"

    async def unpack(self, catalog: str, reference: oci.Reference) -> Unpacked:
        """Pull `reference` and extract its catalog directory (reusing a finished unpack of the digest)."""
        pulled = await self.client.pull(reference)
        configs_dir = pulled.labels.get(CONFIGS_LABEL)
        if not configs_dir:
            raise MissingConfigsLabel(
                f"image {pulled.reference} is not a catalog image: its config has no label {CONFIGS_LABEL!r} "
                "naming the directory that holds the File-Based Catalog"
            )
        digest = pulled.reference.digest
        if digest is None:  # pull always answers with a digest reference
            raise UnpackError(f"image {reference} did not resolve to a digest")
        final = self.path(catalog, digest)
        try:
            if not final.is_dir():
                await asyncio.to_thread(self._extract, pulled, configs_dir, final)
        except oci.UnsafeContent as error:
            raise UnpackError(f"image {pulled.reference}: {error}") from None
        except _CORRUPT_LAYER as error:
            raise UnpackError(
                f"image {pulled.reference}: a layer is not a readable tar archive in its declared "
                f"compression ({type(error).__name__}: {error})"
            ) from None
        return Unpacked(reference=pulled.reference, path=final, configs_dir=configs_dir)

    def _extract(self, pulled: oci.PulledImage, configs_dir: str, final: Path) -> None:
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = final.parent / f".staging-{uuid.uuid4().hex[:12]}"
        staging.mkdir()
        try:
            options = oci.ExtractOptions(select=configs_dir, max_total_bytes=self.max_bytes)
            statistics = oci.apply_layers(_layers(pulled), staging, options)
            if statistics.entries == 0:
                raise UnpackError(
                    f"image {pulled.reference}: the catalog directory {configs_dir!r} named by label "
                    f"{CONFIGS_LABEL!r} is missing or empty"
                )
            try:
                os.rename(staging, final)
            except OSError:
                if not final.is_dir():  # a concurrent unpack of the same digest won the rename
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def cleanup(self, catalog: str, *, keep: oci.Digest | None = None) -> None:
        """Remove every unpacked digest of `catalog` except `keep`, and leftover staging directories."""
        if not is_valid_name(catalog):
            raise ValueError(f"invalid catalog name {catalog!r}: must be a DNS-1123 subdomain")
        directory = self.root / catalog
        if not directory.is_dir():
            return
        kept = self.path(catalog, keep).name if keep is not None else None
        for entry in directory.iterdir():
            if entry.name != kept:
                shutil.rmtree(entry, ignore_errors=True)
        with contextlib.suppress(OSError):
            directory.rmdir()  # only when empty

    def catalogs(self) -> list[str]:
        """Catalogs with anything unpacked (for garbage collection of deleted catalogs)."""
        return sorted(entry.name for entry in self.root.iterdir() if entry.is_dir())


def _layers(pulled: oci.PulledImage) -> Iterator[IO[bytes]]:
    """Open each layer as a tar stream in turn, closing the previous one."""
    for descriptor, path in pulled.layers:
        with oci.open_layer(path, descriptor.media_type) as stream:
            yield stream
