"""Making one catalog image the content a replica serves: pull, unpack, validate, store.

`Content.ensure(name, reference)` is the one path from an image to served bytes, shared by the
leader's reconciler and the followers of every other replica:

1. nothing to do when `Storage` already serves `name` at the digest (after a restart too: the
   storage directory survives, so a restart re-downloads nothing);
2. otherwise `Unpacker.unpack` pulls the image (blobs already in the blob cache are not fetched
   again) and extracts its catalog directory;
3. the directory streams through `fbc.checked` into `Storage.store`, which swaps the served version
   only when the whole catalog parsed and validated; on any failure the previous version stays;
4. the unpacked directory is removed: the stored JSONL is what is served, and the blob cache can
   rebuild it.

Errors are `ContentError` with a deterministic message fit for a status condition, and a
`terminal` flag for problems that retrying the same image cannot fix.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass

from olm import fbc, oci
from olm.catalogd import blobprune, metrics
from olm.catalogd.storage import Storage, StoredCatalog
from olm.catalogd.unpack import Unpacker, UnpackError
from olm.process import memory
from olm_runtime import controller, tracing

_ADDRESS = re.compile(r"(?:read|write|dial) (?:tcp|udp)[46]? \S+(?: ?-> ?\S+)?: ")
_TERMINAL_REGISTRY_ERRORS = (
    oci.NotFound,
    oci.DigestMismatch,
    oci.SizeMismatch,
    oci.TooLarge,
    oci.UnsupportedMediaType,
    oci.NoMatchingPlatform,
)


class ContentError(controller.RetryableError):
    """The image could not become served content; `message` says why and what to change.

    A `RetryableError`: an expected failure, retried and logged without a traceback.
    """

    def __init__(self, message: str, *, terminal: bool) -> None:
        super().__init__(message)
        self.message = message
        self.terminal = terminal
        """True when retrying the same image cannot help (the image itself is bad)."""


def sanitize(message: str) -> str:
    """Drop socket address pairs (`read tcp a:port->b:port: `), whose ports change between retries."""
    return _ADDRESS.sub("", message)


@dataclass(frozen=True, slots=True)
class Ensured:
    stored: StoredCatalog
    unpacked: bool
    """False when the digest was already served and nothing was pulled."""


class Content:
    """Ties the registry client, unpacker and storage of one replica together."""

    def __init__(self, client: oci.RegistryClient, unpacker: Unpacker, storage: Storage) -> None:
        self.client = client
        self.unpacker = unpacker
        self.storage = storage
        self._locks: dict[str, asyncio.Lock] = {}
        self.pulls = blobprune.PullGate()
        """Held by every pull and unpack, so a blob cache prune never removes a blob in use."""
        self.unpacked = asyncio.Event()
        """Set after each successful unpack (garbage collection then prunes the blob cache)."""

    async def resolve(self, reference: oci.Reference) -> oci.Reference:
        """`reference` at the digest it names now (no request for a digest reference)."""
        try:
            digest = await self.client.resolve(reference)
        except oci.RegistryError as error:
            raise ContentError(sanitize(str(error)), terminal=False) from error
        return oci.Reference(reference.registry, reference.repository, None, digest)

    def served(self, name: str, digest: oci.Digest) -> StoredCatalog | None:
        stored = self.storage.get(name)
        return stored if stored is not None and stored.digest == str(digest) else None

    async def ensure(self, name: str, reference: oci.Reference) -> Ensured:
        """Serve `name` from `reference` (a digest reference); see the module docstring."""
        if reference.digest is None:
            raise ValueError("Content.ensure needs a digest reference")
        async with self._locks.setdefault(name, asyncio.Lock()):
            stored = self.served(name, reference.digest)
            if stored is not None:
                self.storage.compress(stored)  # stored before a restart that cut its compression short
                return Ensured(stored, unpacked=False)
            started = time.monotonic()
            result: metrics.UnpackResult | None = metrics.UnpackResult.ERROR
            try:
                async with self.pulls.pulling():
                    unpacked = await self.unpacker.unpack(name, reference)
                with tracing.span("clustercatalog/store"):
                    stored = await self.storage.store(
                        name, str(reference.digest), fbc.checked(fbc.iter_metas(unpacked.path))
                    )
                result = metrics.UnpackResult.SUCCESS
                self.unpacked.set()
                metrics.UNPACK_SIZE.observe(stored.size)
            except asyncio.CancelledError:
                result = None  # stopped (shutdown, deletion), not failed
                raise
            except UnpackError as error:
                raise ContentError(sanitize(str(error)), terminal=True) from error
            except fbc.CatalogError as error:
                raise ContentError(
                    f"image {reference} holds an invalid File-Based Catalog: {error}", terminal=True
                ) from error
            except _TERMINAL_REGISTRY_ERRORS as error:
                raise ContentError(f"pulling {reference}: {sanitize(str(error))}", terminal=True) from error
            except oci.RegistryError as error:
                raise ContentError(f"pulling {reference}: {sanitize(str(error))}", terminal=False) from error
            except OSError as error:
                raise ContentError(
                    f"cannot store the content of {reference}: {error.strerror or error}", terminal=False
                ) from error
            finally:
                if result is not None:
                    metrics.UNPACK_DURATION.labels(result.value).observe(time.monotonic() - started)
                await asyncio.to_thread(self.unpacker.cleanup, name)
                await asyncio.to_thread(memory.release_freed_memory)  # serve at less than the ingest peak
            return Ensured(stored, unpacked=True)

    async def remove(self, name: str) -> None:
        """Stop serving `name` and delete everything kept for it (no error if there is nothing)."""
        async with self._locks.setdefault(name, asyncio.Lock()):
            await self.storage.delete(name)
            await asyncio.to_thread(self.unpacker.cleanup, name)
        self._locks.pop(name, None)

    def names(self) -> set[str]:
        """Every catalog this replica keeps anything for (served or unpacked)."""
        return set(self.storage.list()) | set(self.unpacker.catalogs())
