"""Deterministic, gzip-compressed tar layers written from a directory tree.

The promise: the same files (content, type, permission bits, link targets, numeric owners where kept)
give byte-identical layers, whatever their mtimes and whatever order the file system lists them in.
Entries are sorted by path components (a directory comes right before its children), every mtime
is `MTIME`, user and group names are empty (owners are numeric), setuid and setgid bits are dropped
from files (nothing in the image runs as another user), files linked more than once inside the
layer stay hard links, and the gzip header carries no name and no time.
"""

from __future__ import annotations

import enum
import gzip
import hashlib
import io
import os
import stat
import subprocess
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from typing_extensions import Buffer

from olm_testkit.images import layout

MTIME = 0
COMPRESS_LEVEL = 6
"""zlib's default: level 9 makes the Debian layer ~2% smaller for twice the time."""


class LayerError(RuntimeError):
    pass


class Ownership(enum.Enum):
    ROOT = "root"
    """Every entry is owned by 0:0 (the virtualenv layers: pip runs as root)."""
    KEEP = "keep"
    """Numeric owners as on disk (the Debian tree, where dpkg gave a few paths to other groups)."""


@dataclass(frozen=True, kw_only=True)
class Layer:
    """A layer written to `path`; `digest` names the compressed blob, `diff_id` the tar inside it."""

    path: Path
    digest: str
    diff_id: str
    size: int
    """Compressed bytes."""
    unpacked_size: int
    """Bytes of the uncompressed tar (file contents plus 512-byte headers)."""

    def blob(self) -> layout.Blob:
        return layout.Blob(media_type=layout.LAYER_MEDIA_TYPE, data=self.path.read_bytes())

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.path.name,
            "digest": self.digest,
            "diff_id": self.diff_id,
            "size": self.size,
            "unpacked_size": self.unpacked_size,
        }

    @classmethod
    def from_json(cls, directory: Path, data: dict[str, object]) -> Layer:
        return cls(
            path=directory / str(data["file"]),
            digest=str(data["digest"]),
            diff_id=str(data["diff_id"]),
            size=int(str(data["size"])),
            unpacked_size=int(str(data["unpacked_size"])),
        )


def tree(
    root: Path, top: PurePosixPath, *, keep_contents_of: Iterable[PurePosixPath] = ()
) -> list[PurePosixPath]:
    """`top` and everything under it, relative to `root`, without following symbolic links; the
    directories in `keep_contents_of` are listed but not their contents."""
    emptied = set(keep_contents_of)
    found = [top]
    if (root / top).is_symlink() or not (root / top).is_dir():
        return found
    for directory, dirnames, filenames in os.walk(root / top):
        relative = PurePosixPath(Path(directory).relative_to(root).as_posix())
        if relative in emptied:
            dirnames.clear()
            continue
        found.extend(relative / name for name in (*dirnames, *filenames))
    return found


def with_parents(paths: Iterable[PurePosixPath]) -> list[PurePosixPath]:
    """`paths` plus every directory above them, each once, in layer order."""
    members: set[PurePosixPath] = set()
    for path in paths:
        if path.is_absolute() or ".." in path.parts or path == PurePosixPath("."):
            raise LayerError(f"{path}: layer paths are relative to the root and stay inside it")
        members.add(path)
        members.update(p for p in path.parents if p != PurePosixPath("."))
    return sorted(members, key=lambda p: p.parts)


class _Digesting(io.RawIOBase):
    """A write-only stream that hashes and counts what passes through it to `target`."""

    def __init__(self, target: IO[bytes] | gzip.GzipFile) -> None:
        super().__init__()
        self._target = target
        self._sha256 = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Buffer, /) -> int:
        view = memoryview(data)
        self._sha256.update(view)
        self.size += view.nbytes
        self._target.write(view)
        return view.nbytes

    def flush(self) -> None:
        self._target.flush()

    @property
    def digest(self) -> str:
        return "sha256:" + self._sha256.hexdigest()


def _entry(root: Path, member: PurePosixPath, ownership: Ownership) -> tuple[tarfile.TarInfo, Path]:
    path = root / member
    st = path.lstat()
    info = tarfile.TarInfo(member.as_posix())
    info.mtime = MTIME
    info.uname = info.gname = ""
    info.uid, info.gid = (st.st_uid, st.st_gid) if ownership is Ownership.KEEP else (0, 0)
    if stat.S_ISDIR(st.st_mode):
        info.type = tarfile.DIRTYPE
        info.mode = stat.S_IMODE(st.st_mode)
    elif stat.S_ISREG(st.st_mode):
        info.type = tarfile.REGTYPE
        info.mode = stat.S_IMODE(st.st_mode) & 0o777
        info.size = st.st_size
    elif stat.S_ISLNK(st.st_mode):
        info.type = tarfile.SYMTYPE
        info.mode = 0o777
        info.linkname = os.readlink(path)
    else:
        raise LayerError(f"{path}: only directories, files and symbolic links go into a layer")
    return info, path


def write(
    root: Path,
    members: Sequence[PurePosixPath],
    destination: Path,
    *,
    ownership: Ownership = Ownership.ROOT,
) -> Layer:
    """Write `members` of `root` (paths relative to it, parents included by the caller or by
    `with_parents`) as a gzip-compressed tar at `destination`, replacing it atomically."""
    ordered = sorted(set(members), key=lambda p: p.parts)
    partial = destination.with_name(destination.name + ".partial")
    linked: dict[tuple[int, int], str] = {}
    with partial.open("wb") as out:
        compressed = _Digesting(out)
        with gzip.GzipFile(
            filename="", mode="wb", fileobj=compressed, compresslevel=COMPRESS_LEVEL, mtime=MTIME
        ) as gz:
            plain = _Digesting(gz)
            with tarfile.open(fileobj=plain, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for member in ordered:
                    info, path = _entry(root, member, ownership)
                    if info.type != tarfile.REGTYPE:
                        tar.addfile(info)
                        continue
                    st = path.lstat()
                    if st.st_nlink > 1:
                        first = linked.setdefault((st.st_dev, st.st_ino), info.name)
                        if first != info.name:
                            info.type, info.linkname, info.size = tarfile.LNKTYPE, first, 0
                            tar.addfile(info)
                            continue
                    with path.open("rb") as content:
                        tar.addfile(info, content)
    partial.replace(destination)
    return Layer(
        path=destination,
        digest=compressed.digest,
        diff_id=plain.digest,
        size=compressed.size,
        unpacked_size=plain.size,
    )


def unpack(layers: Iterable[Path], destination: Path) -> None:
    """Extract gzip-compressed tar layers in order over `destination`, keeping numeric owners and
    modes (GNU tar is fast at this; the layers are ours, so they are trusted)."""
    destination.mkdir(parents=True, exist_ok=True)
    for layer_file in layers:
        result = subprocess.run(
            ["tar", "--numeric-owner", "-xpzf", str(layer_file), "-C", str(destination)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise LayerError(f"unpacking {layer_file} failed: {result.stderr.strip()[-2000:]}")
