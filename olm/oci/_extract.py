"""Applying image layers to a directory, safely: one subtree only, no escapes, bounded size.

Layers are applied in order, as a container runtime would, with OCI whiteouts (`.wh.<name>` removes
`<name>` from lower layers, `.wh..wh..opq` empties a directory of lower-layer content). Only the
entries under `select` are written, re-rooted so that `select` becomes the destination directory;
everything else in the image is skipped unread. Inside the selection the rules are strict, and any
breach fails the whole extraction:

- names are relative and never contain `..`; nothing is written through a symbolic link;
- symbolic links must resolve inside the destination, checked when created and again, on the final
  tree, after the last layer; hard links must point at a file already extracted inside the selection;
- device files, FIFOs and unknown entry types are refused;
- regular files are written owner-readable and -writable, without setuid, setgid or sticky bits;
- the total size of regular files and the number of entries are capped.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from olm.oci._errors import RegistryError

WHITEOUT_PREFIX = ".wh."
OPAQUE_WHITEOUT = ".wh..wh..opq"
_CHUNK = 1 << 20


class UnsafeContent(RegistryError):
    """A layer tried something the extraction rules forbid; the message names the entry."""


@dataclass(frozen=True, kw_only=True)
class ExtractOptions:
    select: str = ""
    """The directory of the image to extract (such as `configs`); empty for the whole image."""
    max_total_bytes: int = 4 << 30
    """Cap on the sum of regular file sizes written."""
    max_entries: int = 1_000_000
    """Cap on the number of entries written."""


@dataclass(slots=True)
class ExtractStatistics:
    files: int = 0
    bytes: int = 0
    entries: int = 0
    skipped: int = 0
    layer_paths: set[tuple[str, ...]] = field(default_factory=set)


def normalise_select(select: str) -> tuple[str, ...]:
    """The parts of a selection path (`/configs/` -> `("configs",)`); refuses `..`."""
    parts = tuple(p for p in select.strip().split("/") if p not in ("", "."))
    if ".." in parts:
        raise UnsafeContent(f"the directory to extract {select!r} contains '..'")
    return parts


def apply_layers(layers: Iterable[IO[bytes]], dest: Path, options: ExtractOptions) -> ExtractStatistics:
    """Apply uncompressed tar streams in order onto `dest` (which must exist); blocking."""
    run = _Run(dest, normalise_select(options.select), options)
    for index, layer in enumerate(layers):
        run.stats.layer_paths = set()
        with tarfile.open(fileobj=layer, mode="r|") as tar:
            for member in tar:
                # Checked for every entry, extracted or skipped: to reach the next header, tarfile
                # reads past the size an entry declares, and on a stream that ends first it keeps
                # reading nothing, one block at a time (a terabyte declared is hours of CPU).
                if member.size > options.max_total_bytes:
                    raise UnsafeContent(
                        f"layer {index}, entry {member.name!r}: declares {member.size} bytes, larger than "
                        f"the limit of {options.max_total_bytes} bytes"
                    )
                run.apply(tar, member, index)
    verify_tree(dest)
    return run.stats


class _Run:
    def __init__(self, dest: Path, select: tuple[str, ...], options: ExtractOptions) -> None:
        self.dest = dest
        self.select = select
        self.options = options
        self.stats = ExtractStatistics()

    def apply(self, tar: tarfile.TarFile, member: tarfile.TarInfo, layer: int) -> None:
        raw, select, dest, stats = member.name, self.select, self.dest, self.stats
        where = f"layer {layer}, entry {raw!r}"
        parts = tuple(p for p in raw.split("/") if p not in ("", "."))
        if parts[: len(select)] != select and not _whiteout_covers(parts, select):
            stats.skipped += 1
            return
        if "\0" in raw or "\0" in member.linkname:  # PAX headers can carry one; no file name can
            raise UnsafeContent(f"{where}: a NUL character in a name is not allowed")
        if raw.startswith("/"):
            raise UnsafeContent(f"{where}: absolute paths are not allowed")
        if ".." in parts:
            raise UnsafeContent(f"{where}: '..' in a path is not allowed")
        if parts and parts[-1].startswith(WHITEOUT_PREFIX):
            _whiteout(parts, dest, select, stats, where)
            return
        rel = parts[len(select) :]
        if not rel:
            if not member.isdir():
                raise UnsafeContent(f"{where}: the directory to extract is not a directory in the image")
            return
        stats.entries += 1
        if stats.entries > self.options.max_entries:
            raise UnsafeContent(f"{where}: more than {self.options.max_entries} entries")
        target = _prepare(dest, rel, where)
        stats.layer_paths.add(rel)
        if member.isdir():
            if target.is_symlink() or (target.exists() and not target.is_dir()):
                _remove(target)
            target.mkdir(mode=0o755, exist_ok=True)
            os.chmod(target, (member.mode & 0o755) | 0o700)
        elif member.isreg():
            self._write_file(tar, member, target, where)
        elif member.issym():
            _symlink(member.linkname, rel, target, dest, where)
        elif member.islnk():
            _hardlink(member.linkname, select, dest, target, where)
        elif member.ischr() or member.isblk() or member.isfifo():
            raise UnsafeContent(f"{where}: device files and FIFOs are not allowed")
        else:
            raise UnsafeContent(f"{where}: entry type {member.type!r} is not supported")

    def _write_file(self, tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path, where: str) -> None:
        limit = self.options.max_total_bytes
        if self.stats.bytes + member.size > limit:
            raise UnsafeContent(f"{where}: the content is larger than the limit of {limit} bytes")
        if target.is_symlink() or target.exists():
            _remove(target)
        source = tar.extractfile(member)
        if source is None:
            raise UnsafeContent(f"{where}: the file's data cannot be read")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(target, flags, 0o600)
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(_CHUNK):
                out.write(chunk)
        os.chmod(target, (member.mode & 0o755) | 0o600)
        self.stats.files += 1
        self.stats.bytes += member.size


def _whiteout_covers(parts: tuple[str, ...], select: tuple[str, ...]) -> bool:
    """A `.wh.` entry for the selected directory or one of its ancestors still matters."""
    if not parts or not parts[-1].startswith(WHITEOUT_PREFIX):
        return False
    if parts[-1] == OPAQUE_WHITEOUT:
        return parts[:-1] == select[: len(parts) - 1]
    hidden = (*parts[:-1], parts[-1][len(WHITEOUT_PREFIX) :])
    return select[: len(hidden)] == hidden


def _whiteout(
    parts: tuple[str, ...], dest: Path, select: tuple[str, ...], stats: ExtractStatistics, where: str
) -> None:
    directory, name = parts[:-1], parts[-1]
    inside = directory[len(select) :] if len(directory) >= len(select) else ()
    if _through_link(dest, inside):
        raise UnsafeContent(f"{where}: the whiteout goes through a symbolic link")
    if name == OPAQUE_WHITEOUT:
        root = dest.joinpath(*inside)
        if root.is_dir() and not root.is_symlink():
            for child in root.iterdir():
                if (*inside, child.name) not in stats.layer_paths:
                    _remove(child)
        return
    hidden = (*directory, name[len(WHITEOUT_PREFIX) :])
    if len(hidden) <= len(select):  # the whole selection is hidden
        for child in dest.iterdir():
            if (child.name,) not in stats.layer_paths:
                _remove(child)
        return
    rel = hidden[len(select) :]
    path = dest.joinpath(*rel)
    if rel not in stats.layer_paths and (path.is_symlink() or path.exists()):
        _remove(path)


def _through_link(dest: Path, directory: tuple[str, ...]) -> bool:
    current = dest
    for part in directory:
        current = current / part
        if current.is_symlink():
            return True
    return False


def _prepare(dest: Path, rel: tuple[str, ...], where: str) -> Path:
    """Create missing parents as directories; refuse parents that are links or files."""
    current = dest
    for part in rel[:-1]:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            current.mkdir(mode=0o755)
            continue
        if stat.S_ISLNK(mode):
            raise UnsafeContent(f"{where}: the path goes through a symbolic link")
        if not stat.S_ISDIR(mode):
            raise UnsafeContent(f"{where}: a parent of the entry is not a directory")
    return current / rel[-1]


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _symlink(linkname: str, rel: tuple[str, ...], target: Path, dest: Path, where: str) -> None:
    if not linkname:  # Linux cannot create one
        raise UnsafeContent(f"{where}: symbolic link with an empty target is not allowed")
    if linkname.startswith("/"):
        raise UnsafeContent(f"{where}: symbolic link to an absolute path ({linkname!r}) is not allowed")
    resolved = posixpath.normpath(posixpath.join(*rel[:-1], linkname) if rel[:-1] else linkname)
    if resolved == ".." or resolved.startswith("../"):
        raise UnsafeContent(f"{where}: symbolic link {linkname!r} points outside the extracted directory")
    if target.is_symlink() or target.exists():
        _remove(target)
    os.symlink(linkname, target)
    if not Path(os.path.realpath(target)).is_relative_to(os.path.realpath(dest)):
        target.unlink()
        raise UnsafeContent(f"{where}: symbolic link {linkname!r} resolves outside the extracted directory")


def _hardlink(linkname: str, select: tuple[str, ...], dest: Path, target: Path, where: str) -> None:
    parts = tuple(p for p in linkname.split("/") if p not in ("", "."))
    if (
        linkname.startswith("/")
        or ".." in parts
        or parts[: len(select)] != select
        or len(parts) <= len(select)
    ):
        raise UnsafeContent(f"{where}: hard link to {linkname!r}, outside the extracted directory")
    source = _prepare(dest, parts[len(select) :], where)
    if source.is_symlink() or not source.is_file():
        raise UnsafeContent(f"{where}: hard link to {linkname!r}, which is not an extracted regular file")
    if source == target:  # a link to itself: the file is there already (replacing it would delete it)
        return
    if target.is_symlink() or target.exists():
        _remove(target)
    os.link(source, target)


def verify_tree(dest: Path) -> None:
    """Check the final tree: every symbolic link resolves, and inside `dest`.

    A loop of links is refused too: whoever reads the tree next would fail on it.
    """
    root = dest.resolve()
    for directory, dirnames, filenames in os.walk(dest):
        for name in (*dirnames, *filenames):
            path = Path(directory, name)
            if not path.is_symlink():
                continue
            relative = str(path.relative_to(dest))
            try:
                resolved = path.resolve()
            except (RuntimeError, OSError):  # RuntimeError up to Python 3.12, OSError (ELOOP) after
                raise UnsafeContent(f"symbolic link {relative!r} is part of a loop") from None
            if not resolved.is_relative_to(root):
                raise UnsafeContent(f"symbolic link {relative!r} resolves outside the extracted directory")
