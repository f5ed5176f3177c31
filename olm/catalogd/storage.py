"""Catalog content on disk, as served: one JSONL file per catalog plus its index.

Layout under the storage root:

    <catalog>/current              symlink to the data directory being served
    <catalog>/<key>.<random>/      one stored version (`key` is the image digest, `sha256-<hex>`)
        all.jsonl                  every meta, one compact JSON object per line, in catalog order
        all.jsonl.gz               the same, gzip-compressed after the version is served
        .all.jsonl.gz.partial      that file while it is being written
        index.json                 byte offsets by schema, package and name (see `index`)
        info.json                  digest, content hash, sizes, count, time stored
    <catalog>/.staging-<random>/   a version being written (removed if anything fails)

`store` writes a new version into a staging directory while the metas stream by, fsyncs it,
renames it into place and then swaps `current` with an atomic `rename` of a fresh symlink, so a
reader sees the old content or the new, never a mix; the previous version is deleted afterwards
(files a reader already opened stay readable). `delete` removes `current` first, then the data.
The gzip form is written afterwards, in the background (`compress`): a large catalog is served as
soon as its plain form is stored, in the identity encoding until the compressed file is there.
Those compressions are tasks the storage owns (`background`); `aclose` stops them when the process
stops.
The controller decides what is served by calling `store` and `delete`; the HTTP server only reads
(`get`). Memory stays flat while storing: one meta and the index are held, nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from olm.catalogd import compress
from olm.catalogd.background import Background
from olm.catalogd.index import CatalogIndex
from olm.fbc import Meta
from olm_runtime.logging import get_logger

CURRENT = "current"
ALL = "all.jsonl"
ALL_GZIP = "all.jsonl.gz"
INDEX = "index.json"
INFO = "info.json"
_BUFFER = 1 << 20
_log = get_logger("catalogd.storage")


@dataclass(frozen=True, slots=True)
class StoredCatalog:
    """One served version of a catalog (immutable: a new `store` makes a new one)."""

    name: str
    digest: str
    directory: Path
    content_hash: str
    """sha256 of `all.jsonl`: the basis of the strong ETags."""
    size: int
    count: int
    stored_at: float
    """Unix time the version was stored: the `Last-Modified` of its responses."""
    _index: list[CatalogIndex] = field(default_factory=list, repr=False, compare=False)
    _gzip_size: list[int] = field(default_factory=list, repr=False, compare=False)

    @property
    def all_path(self) -> Path:
        return self.directory / ALL

    @property
    def gzip_path(self) -> Path:
        return self.directory / ALL_GZIP

    def gzip_size(self) -> int | None:
        """Bytes of `all.jsonl.gz`; None until the background compression has written it."""
        if not self._gzip_size:
            try:
                self._gzip_size.append(self.gzip_path.stat().st_size)
            except FileNotFoundError:
                return None
        return self._gzip_size[0]

    def loaded_index(self) -> CatalogIndex | None:
        """The index if it is already in memory (so a caller on the event loop need not read it)."""
        return self._index[0] if self._index else None

    def index(self) -> CatalogIndex:
        """The index, read from disk on first use and kept with this version (blocking)."""
        if not self._index:
            self._index.append(CatalogIndex.load(self.directory / INDEX))
        return self._index[0]


@dataclass(eq=False)
class _Compression:
    task: asyncio.Task[None] = field(init=False)
    stop: threading.Event = field(default_factory=threading.Event)
    running: bool = False
    """Set on the event loop once it holds the compression slot (its thread may be writing)."""


_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def is_valid_name(name: str) -> bool:
    """Whether `name` is a DNS-1123 subdomain (what Kubernetes allows as a ClusterCatalog name).

    Such a name can never be `.`, `..` or contain `/`, so it is always one safe path component.
    """
    return len(name) <= 253 and _DNS1123_SUBDOMAIN.match(name) is not None


def _check(name: str) -> None:
    if not is_valid_name(name):
        raise ValueError(f"invalid catalog name {name!r}: must be a DNS-1123 subdomain")


_DIGEST = re.compile(r"^[a-z0-9]+:[a-f0-9]+$")


def digest_key(digest: str) -> str:
    """The directory name of a stored digest; anything but `algorithm:hex` is refused, so a
    digest can never name a path outside the catalog's directory."""
    if not _DIGEST.match(digest):
        raise ValueError(f"invalid digest {digest!r}: expected <algorithm>:<hex>")
    return digest.replace(":", "-")


class Storage:
    """Stored catalogs under `root`. `store`/`delete` for the controller, `get` for readers."""

    def __init__(self, root: Path, *, gzip_level: int = 5) -> None:
        self.root = root
        self.gzip_level = gzip_level
        self._versions: dict[tuple[str, str], StoredCatalog] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._compressing: dict[Path, _Compression] = {}
        """Version directory -> its compression, queued or running."""
        self._compressions = Background("storage")
        """Owns the compression tasks (a reconcile that stores a catalog does not wait for them)."""
        self._one_compression = asyncio.Semaphore(1)
        """Catalogs stored together compress one after the other, leaving the other core to
        ingest and serving."""
        root.mkdir(parents=True, exist_ok=True)

    def recover(self) -> None:
        """Remove what a crash left behind: staging directories and versions no `current` names."""
        for catalog in self.root.iterdir():
            if not catalog.is_dir() or catalog.is_symlink():
                continue
            served = self._target(catalog.name)
            for entry in catalog.iterdir():
                if entry.name not in (CURRENT, served):
                    _remove(entry)
            if served is not None:
                compress.partial_path(catalog / served / ALL_GZIP).unlink(missing_ok=True)

    async def store(self, name: str, digest: str, metas: Iterable[Meta]) -> StoredCatalog:
        """Write `metas` as catalog `name` at `digest` and serve it; blocking work runs in a thread.

        `metas` is consumed in the worker thread (so parsing a catalog directory happens off the
        event loop). If it raises, for example `fbc.InvalidCatalog` from `fbc.checked`, nothing
        changes: the previous version, if any, keeps being served.
        """
        _check(name)
        async with self._locks.setdefault(name, asyncio.Lock()):
            # The version being replaced is deleted at the end; its compression must not race that.
            await self._stop_compressing(name)
            try:
                stored = await asyncio.to_thread(self._store, name, digest, metas)
            except BaseException:
                served = self.get(name)
                if served is not None:
                    self.compress(served)  # still served: its gzip form is still wanted
                raise
            self._versions = {k: v for k, v in self._versions.items() if k[0] != name}
            self._versions[(name, stored.directory.name)] = stored
        self.compress(stored)
        return stored

    def compress(self, stored: StoredCatalog) -> None:
        """Write `stored`'s gzip form in the background unless it is there or being written; a
        failure (a full disk) is logged, and a later call tries again."""
        if stored.directory in self._compressing or stored.gzip_size() is not None:
            return
        job = _Compression()
        job.task = self._compressions.spawn(self._compress(stored, job), name=f"gzip {stored.name}")
        self._compressing[stored.directory] = job
        job.task.add_done_callback(lambda _: self._compressing.pop(stored.directory, None))

    async def _stop_compressing(self, name: str) -> None:
        """Stop `name`'s compressions. A queued one will not touch the disk once stopped, so only a
        running one is waited for."""
        for directory, job in list(self._compressing.items()):
            if directory.parent.name == name:
                job.stop.set()
                if job.running:
                    await asyncio.gather(job.task, return_exceptions=True)

    async def _compress(self, stored: StoredCatalog, job: _Compression) -> None:
        try:
            async with self._one_compression:
                job.running = True
                started = time.monotonic()
                size = await asyncio.to_thread(
                    compress.compress_file,
                    stored.all_path,
                    stored.gzip_path,
                    level=self.gzip_level,
                    stop=job.stop,
                )
        except asyncio.CancelledError:
            job.stop.set()  # the thread cannot be cancelled; it stops at its next read
            raise
        except (FileNotFoundError, compress.Stopped):
            return  # replaced or deleted meanwhile: nothing left to compress
        except OSError as error:
            _log.warning("storage.compress_failed", catalog=stored.name, error=error.strerror or str(error))
            return
        _log.info(
            "storage.compressed",
            catalog=stored.name,
            size=stored.size,
            gzip_size=size,
            seconds=round(time.monotonic() - started, 3),
        )

    async def aclose(self) -> None:
        """Stop the compressions queued or running and wait until they have (a thread writing a gzip
        file stops at its next read; the partial file is removed then, or by `recover`)."""
        for job in self._compressing.values():
            job.stop.set()
        await self._compressions.aclose()

    async def wait_compressed(self) -> None:
        """Wait until no compression is in flight (the gzip forms are written or have failed)."""
        while self._compressing:
            await asyncio.gather(*(job.task for job in self._compressing.values()), return_exceptions=True)

    def _store(self, name: str, digest: str, metas: Iterable[Meta]) -> StoredCatalog:
        catalog_dir = self.root / name
        catalog_dir.mkdir(exist_ok=True)
        staging = catalog_dir / f".staging-{uuid.uuid4().hex[:12]}"
        version = catalog_dir / f"{digest_key(digest)}.{uuid.uuid4().hex[:8]}"
        link = catalog_dir / f".current-{uuid.uuid4().hex[:8]}"
        staging.mkdir()
        try:
            stored = self._write(name, digest, staging, metas)
            os.rename(staging, version)
            previous = self._target(name)
            os.symlink(version.name, link)
            os.replace(link, catalog_dir / CURRENT)
            _fsync_dir(catalog_dir)
        except BaseException:
            # Making the link can fail after the rename (a full disk or no inodes left): the
            # renamed version is then as much debris as the staging directory.
            for leftover in (staging, link, version):
                if leftover.name != self._target(name):
                    _remove(leftover)
            raise
        if previous and previous != version.name:
            _remove(catalog_dir / previous)
        return _moved(stored, version)

    def _write(self, name: str, digest: str, staging: Path, metas: Iterable[Meta]) -> StoredCatalog:
        index = CatalogIndex()
        hasher = hashlib.sha256()
        with (staging / ALL).open("wb", buffering=_BUFFER) as plain:
            for meta in metas:
                line = meta.blob + b"\n"
                plain.write(line)
                hasher.update(line)
                index.add(len(line), schema=meta.schema, package=meta.package, name=meta.name)
            plain.flush()
            os.fsync(plain.fileno())
        index.save(staging / INDEX)
        stored_at = float(int(time.time()))
        info: dict[str, Any] = {
            "name": name,
            "digest": digest,
            "contentHash": hasher.hexdigest(),
            "size": index.size,
            "count": len(index),
            "storedAt": stored_at,
        }
        (staging / INFO).write_bytes(orjson.dumps(info))
        for file in (INDEX, INFO):
            with (staging / file).open("rb") as handle:
                os.fsync(handle.fileno())
        stored = _from_info(info, staging)
        stored._index.append(index)
        return stored

    def get(self, name: str) -> StoredCatalog | None:
        """The version of `name` being served now, or `None` (never stored, deleted, unreadable)."""
        if not is_valid_name(name):
            return None
        target = self._target(name)
        if target is None:
            return None
        cached = self._versions.get((name, target))
        if cached is not None:
            return cached
        directory = self.root / name / target
        try:
            info = orjson.loads((directory / INFO).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        stored = _from_info(info, directory)
        self._versions = {k: v for k, v in self._versions.items() if k[0] != name}
        self._versions[(name, target)] = stored
        return stored

    def list(self) -> dict[str, str]:
        """Every catalog being served, with its digest (for garbage collection of deleted catalogs)."""
        served: dict[str, str] = {}
        for entry in sorted(self.root.iterdir()):
            stored = self.get(entry.name) if entry.is_dir() else None
            if stored is not None:
                served[entry.name] = stored.digest
        return served

    def contains(self, name: str, digest: str) -> bool:
        """Whether `name` is being served at exactly `digest` (nothing to do for that image)."""
        stored = self.get(name)
        return stored is not None and stored.digest == digest

    async def delete(self, name: str) -> None:
        """Stop serving `name` and remove its content (no error if it was not stored)."""
        _check(name)
        async with self._locks.setdefault(name, asyncio.Lock()):
            await self._stop_compressing(name)
            catalog_dir = self.root / name
            (catalog_dir / CURRENT).unlink(missing_ok=True)
            self._versions = {k: v for k, v in self._versions.items() if k[0] != name}
            await asyncio.to_thread(_remove, catalog_dir)

    def _target(self, name: str) -> str | None:
        try:
            target = os.readlink(self.root / name / CURRENT)
        except OSError:
            return None
        return target if "/" not in target else None


def _from_info(info: dict[str, Any], directory: Path) -> StoredCatalog:
    return StoredCatalog(
        name=str(info["name"]),
        digest=str(info["digest"]),
        directory=directory,
        content_hash=str(info["contentHash"]),
        size=int(info["size"]),
        count=int(info["count"]),
        stored_at=float(info["storedAt"]),
    )


def _moved(stored: StoredCatalog, directory: Path) -> StoredCatalog:
    moved = StoredCatalog(
        name=stored.name,
        digest=stored.digest,
        directory=directory,
        content_hash=stored.content_hash,
        size=stored.size,
        count=stored.count,
        stored_at=stored.stored_at,
    )
    moved._index.extend(stored._index)
    return moved


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
