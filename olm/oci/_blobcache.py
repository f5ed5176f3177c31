"""Content-addressed blob storage on disk, reused across restarts.

Layout: `<root>/blobs/<algorithm>/<hex>` for complete blobs and `<root>/tmp/` for downloads in
progress. A blob is streamed into a temporary file while being hashed and counted, fsynced, and
renamed into place only when its digest and size are right, so a file under `blobs/` is always
complete and correct as written. Leftover temporary files (a crash mid-download) are removed when
the cache is opened. Manifests are stored here too (they are content-addressed as well), which lets
a pull by digest that was done before skip the network entirely.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from olm.oci._digest import Digest
from olm.oci._errors import DigestMismatch, SizeMismatch, TooLarge


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
        (root / "blobs").mkdir(parents=True, exist_ok=True)
        (root / "tmp").mkdir(parents=True, exist_ok=True)
        for leftover in (root / "tmp").glob("*.partial"):
            leftover.unlink(missing_ok=True)

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

    def prune(self, keep: Iterable[Digest]) -> int:
        """Remove every blob not in `keep`; return how many were removed."""
        wanted = set(keep)
        removed = 0
        for digest in list(self.digests()):
            if digest not in wanted:
                self.remove(digest)
                removed += 1
        return removed
