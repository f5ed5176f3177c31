"""Unpacking a catalog image: pull it, find its File-Based Catalog, extract only that directory.

The image config label `operators.operatorframework.io.index.configs.v1` names the catalog
directory inside the image (usually `/configs`). That directory, and nothing else, is extracted
with the safety rules of `olm.oci.apply_layers` (no traversal, no absolute paths, no links out,
no devices, a size cap) by `olm.oci.unpack_into`, into `<root>/<catalog>/<digest>`, atomically.
A directory that exists there is therefore whole, and is reused as is: unpacking the same digest
again (after a restart, say) pulls nothing but the tag resolution and extracts nothing.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olm import oci
from olm.catalogd.storage import is_valid_name
from olm_runtime import tracing

CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"
DEFAULT_MAX_CATALOG_BYTES = 2 << 30


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

    def _directory(self, catalog: str) -> Path:
        if not is_valid_name(catalog):
            raise ValueError(f"invalid catalog name {catalog!r}: must be a DNS-1123 subdomain")
        return self.root / catalog

    async def unpack(self, catalog: str, reference: oci.Reference) -> Unpacked:
        """Pull `reference` and extract its catalog directory (reusing a finished unpack of the digest)."""
        with tracing.span("clustercatalog/pull", {"oci.reference": str(reference)}):
            pulled = await self.client.pull(reference)
        configs_dir = pulled.labels.get(CONFIGS_LABEL)
        if not configs_dir:
            raise MissingConfigsLabel(
                f"image {pulled.reference} is not a catalog image: its config has no label {CONFIGS_LABEL!r} "
                "naming the directory that holds the File-Based Catalog"
            )
        if pulled.reference.digest is None:  # pull always answers with a digest reference
            raise UnpackError(f"image {reference} did not resolve to a digest")
        options = oci.ExtractOptions(select=configs_dir, max_total_bytes=self.max_bytes)
        try:
            path = await oci.unpack_into(pulled, self._directory(catalog), options)
        except oci.EmptySelection:
            raise UnpackError(
                f"image {pulled.reference}: the catalog directory {configs_dir!r} named by label "
                f"{CONFIGS_LABEL!r} is missing or empty"
            ) from None
        except (oci.UnsafeContent, oci.CorruptLayer) as error:
            raise UnpackError(f"image {pulled.reference}: {error}") from None
        return Unpacked(reference=pulled.reference, path=path, configs_dir=configs_dir)

    def cleanup(self, catalog: str, *, keep: oci.Digest | None = None) -> None:
        """Remove every unpacked digest of `catalog` except `keep`, and leftover staging directories."""
        directory = self._directory(catalog)
        if not directory.is_dir():
            return
        kept = oci.unpacked_path(directory, keep).name if keep is not None else None
        for entry in directory.iterdir():
            if entry.name != kept:
                shutil.rmtree(entry, ignore_errors=True)
        with contextlib.suppress(OSError):
            directory.rmdir()  # only when empty

    def catalogs(self) -> list[str]:
        """Catalogs with anything unpacked (for garbage collection of deleted catalogs)."""
        return sorted(entry.name for entry in self.root.iterdir() if entry.is_dir())


def resolved_image(catalog: Mapping[str, Any]) -> oci.Reference | None:
    """The image, by digest, that `catalog`'s status reports resolved (`status.resolvedSource.image.ref`);
    None when there is none or it names no digest."""
    ref = (((catalog.get("status") or {}).get("resolvedSource") or {}).get("image") or {}).get("ref")
    if not ref:
        return None
    try:
        reference = oci.Reference.parse(str(ref))
    except oci.InvalidReference:
        return None
    return reference if reference.digest is not None else None
