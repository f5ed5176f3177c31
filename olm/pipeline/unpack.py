"""Pulling a bundle image and reading it as registry+v1, cached by image digest.

Layout: `<root>/<extension>/<algorithm>-<hex>/` holds the image's files. An extension keeps only
the digest it last unpacked; the directory goes when the extension is deleted. Blobs are cached by
the OCI client, so a re-unpack after a restart downloads nothing. Parsed bundles are also kept in
memory per digest, a few only: a steady reconcile needs no bundle at all (it reuses the newest
revision, `clusterextension.memo`), so they serve the reconciles that render again (a retried
preflight, a spec change, several extensions of one bundle). Big bundles parse to several MiB each,
and parsing them peaks at several times that: the freed heap is handed back after each parse
(`olm.process.memory`), or the process would keep its largest bundle's peak for good (sailoperator's 19
CRDs: 21 MiB kept, 10 after the trim).
"""

from __future__ import annotations

import asyncio
import shutil
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from olm import oci
from olm.process import memory
from olm.registryv1.bundle import BundleError, RegistryV1, load_bundle

__all__ = ["BundleUnpacker", "UnpackError", "Unpacked", "pinned"]

_MAX_BUNDLE_BYTES = 256 << 20


class UnpackError(Exception):
    """The image is not a readable registry+v1 bundle; the message says why."""


@dataclass(frozen=True, kw_only=True)
class Unpacked:
    image: str
    """The image by digest."""
    bundle: RegistryV1


def pinned(image: str) -> str | None:
    """`image` by digest, spelled as `BundleUnpacker.unpack` reports it, when `image` names a digest;
    None for a tag (only a pull tells its digest) or a malformed reference (the pull reports it)."""
    try:
        reference = oci.Reference.parse(image)
    except oci.InvalidReference:
        return None
    return str(reference.with_digest(reference.digest)) if reference.digest is not None else None


def _load_and_release(root: Path) -> RegistryV1:
    try:
        return load_bundle(root)
    finally:
        memory.release_freed_memory()


class BundleUnpacker:
    def __init__(self, registry: oci.RegistryClient, root: Path, *, keep_parsed: int = 4) -> None:
        self.registry = registry
        self.root = root
        self.keep_parsed = keep_parsed
        self._parsed: OrderedDict[str, RegistryV1] = OrderedDict()
        root.mkdir(parents=True, exist_ok=True)

    async def unpack(self, extension: str, image: str) -> Unpacked:
        """Pull `image` (a digest reference costs no request when cached) and parse it.

        Raises `oci.RegistryError` subclasses for registry trouble and `UnpackError` for content.
        """
        reference = oci.Reference.parse(image)
        if reference.digest is not None and (parsed := self._parsed.get(str(reference.digest))) is not None:
            # Every reconcile of an installed extension asks again; a digest names the same content.
            self._parsed.move_to_end(str(reference.digest))
            return Unpacked(image=str(reference.with_digest(reference.digest)), bundle=parsed)
        pulled = await self.registry.pull(reference)
        digest = pulled.reference.digest
        if digest is None:
            raise UnpackError(f"image {image} did not resolve to a digest")
        by_digest = str(pulled.reference)
        parsed = self._parsed.get(str(digest))
        try:
            final = await oci.unpack_into(
                pulled, self.root / extension, oci.ExtractOptions(max_total_bytes=_MAX_BUNDLE_BYTES)
            )
            if parsed is None:
                parsed = await asyncio.to_thread(_load_and_release, final)
        except (oci.UnsafeContent, oci.CorruptLayer, BundleError) as err:
            raise UnpackError(f"bundle image {by_digest}: {err}") from None
        self._parsed[str(digest)] = parsed
        self._parsed.move_to_end(str(digest))
        while len(self._parsed) > self.keep_parsed:
            self._parsed.popitem(last=False)
        self._cleanup(extension, keep=final.name)
        return Unpacked(image=by_digest, bundle=parsed)

    def remove(self, extension: str) -> None:
        """Forget everything unpacked for `extension`."""
        shutil.rmtree(self.root / extension, ignore_errors=True)

    def _cleanup(self, extension: str, *, keep: str) -> None:
        directory = self.root / extension
        for entry in directory.iterdir():
            if entry.name != keep:
                shutil.rmtree(entry, ignore_errors=True)
