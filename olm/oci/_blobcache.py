"""Content-addressed blob storage on disk, reused across restarts.

Layout: `<root>/blobs/<algorithm>/<hex>` for complete blobs, `<root>/tmp/` for downloads in
progress and `<root>/trash/` for blobs being pruned. A blob is streamed into a temporary file while
being hashed and counted, fsynced, and renamed into place only when its digest and size are right;
`prune` moves a blob out of `blobs/` with one rename before deleting it. A file under `blobs/` is
therefore always complete and correct as written, whenever a process dies: a crash mid-download
leaves a temporary file, a crash mid-prune a file in `trash/`, and neither is ever read as a blob.

Several processes may share one cache (two `olmctl` runs, say). Opening the cache, and each
`prune`, empties `trash/` and removes temporary files untouched for `STALE_PARTIAL_SECONDS`: a
download in progress writes to its file at least every read timeout, so what is that old was left
by a process that died, never one still downloading. Manifests are stored here too (they are
content-addressed as well), which lets a pull by digest that was done before skip the network.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from olm.oci._digest import Digest
from olm.oci._errors import DigestMismatch, SizeMismatch, TooLarge

STALE_PARTIAL_SECONDS = 3600.0
"""Age (since the last write) after which a temporary download counts as abandoned."""


class BlobWriter:
    """One blob being written: feed `write`, then `commit` (or `abort`)."""

    def __init__(self, cache: BlobCache, digest: Digest, *, expected_size: int | None, max_size: int) -> None:
        self.digest = digest
        self._cache = cache
        self._expected = expected_size
        self._max = max_size
        self._hasher: Any = digest.hasher()
        self.size = 0
        self._temp = cache.root / "tmp" / f"{digest.hex[:16]}.{uuid.uuid4().hex[:8]}.partial"
        self._file = self._temp.open("wb")

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self._expected is not None and self.size > self._expected:
            raise SizeMismatch(
                f"blob {self.digest} is longer than the {self._expected} bytes its descriptor says"
            )
        if self.size > self._max:
            raise TooLarge(f"blob {self.digest} is larger than the limit of {self._max} bytes")
        self._hasher.update(chunk)
        self._file.write(chunk)

    def commit(self) -> Path:
        """Verify size and digest, make the data durable, and move it into place (blocking I/O)."""
        try:
            if self._expected is not None and self.size != self._expected:
                raise SizeMismatch(
                    f"blob {self.digest} has {self.size} bytes, its descriptor says {self._expected}"
                )
            if not self.digest.matches(self._hasher):
                raise DigestMismatch(
                    f"blob content hashes to {self.digest.algorithm}:{self._hasher.hexdigest()}, "
                    f"expected {self.digest}"
                )
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            target = self._cache.path(self.digest)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self._temp, target)
            return target
        finally:
            self.abort()

    def abort(self) -> None:
        """Drop what was written (a no-op after a successful commit)."""
        self._file.close()
        self._temp.unlink(missing_ok=True)


class BlobCache:
    """Blobs by digest under `root`; safe to share between tasks of one process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for directory in ("blobs", "tmp", "trash"):
            (root / directory).mkdir(parents=True, exist_ok=True)
        self._remove_leftovers()

    def _remove_leftovers(self) -> None:
        """Empty `trash/` (an interrupted prune) and drop abandoned temporary downloads."""
        for doomed in (self.root / "trash").iterdir():
            doomed.unlink(missing_ok=True)
        cutoff = time.time() - STALE_PARTIAL_SECONDS
        for partial in (self.root / "tmp").glob("*.partial"):
            with contextlib.suppress(FileNotFoundError):  # its writer committed or aborted meanwhile
                if partial.stat().st_mtime < cutoff:
                    partial.unlink(missing_ok=True)

    def path(self, digest: Digest) -> Path:
        return self.root / "blobs" / digest.algorithm / digest.hex

    def get(self, digest: Digest, size: int | None = None) -> Path | None:
        """The file of `digest` if cached (and `size` long, when given)."""
        path = self.path(digest)
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        if size is not None and stat.st_size != size:
            return None
        return path

    def read(self, digest: Digest, size: int | None = None, *, max_size: int) -> bytes | None:
        """A small cached blob's bytes (manifests, configs), re-verified; `None` if absent or wrong."""
        path = self.get(digest, size)
        if path is None or path.stat().st_size > max_size:
            return None
        data = path.read_bytes()
        if Digest.of(data, digest.algorithm) != digest:
            self.remove(digest)
            return None
        return data

    def writer(self, digest: Digest, *, expected_size: int | None, max_size: int) -> BlobWriter:
        return BlobWriter(self, digest, expected_size=expected_size, max_size=max_size)

    def put(self, digest: Digest, data: bytes, *, max_size: int) -> Path:
        """Store a blob already in memory (verified like a streamed one)."""
        writer = self.writer(digest, expected_size=len(data), max_size=max_size)
        writer.write(data)
        return writer.commit()

    def remove(self, digest: Digest) -> None:
        self.path(digest).unlink(missing_ok=True)

    def digests(self) -> Iterator[Digest]:
        """Every cached blob."""
        for directory in sorted((self.root / "blobs").iterdir()):
            for file in sorted(directory.iterdir()):
                with contextlib.suppress(ValueError):
                    yield Digest.parse(f"{directory.name}:{file.name}")

    def prune(self, keep: Iterable[Digest]) -> list[Digest]:
        """Remove every blob not in `keep` (blocking I/O); return what was removed.

        Each blob leaves `blobs/` by one atomic rename into `trash/` and is deleted from there, so
        a prune stopped at any point (a crash, a kill) leaves only whole blobs under `blobs/`; the
        next prune or open finishes the deletion. Blobs committed while a prune runs are not in
        its `keep`: callers make sure nothing they need is being pulled meanwhile.
        """
        self._remove_leftovers()
        wanted = set(keep)
        removed = [digest for digest in self.digests() if digest not in wanted]
        for digest in removed:
            doomed = self.root / "trash" / f"{digest.algorithm}-{digest.hex}.{uuid.uuid4().hex[:8]}"
            with contextlib.suppress(FileNotFoundError):  # another process pruned it first
                os.rename(self.path(digest), doomed)
                doomed.unlink()
        return removed
