"""`Followed`: what some files say, loaded again only when one of them changes.

The kubelet updates a mounted ConfigMap or Secret by swapping a symlink, so a changed file has a new
device, inode, size or modification time: `stat` tells, with no read. Each `current()` stats the
files (cheap enough for every pull or connection) and loads them again only when a stat differs; a
load that fails is remembered and raised by every `current()` until the files change again. The CA
bundles (`TrustStore`), `registries.conf` (`RegistriesConf`) and the signature policy
(`SignaturePolicy`) are followed this way.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from olm.oci._errors import RegistryError

__all__ = ["Followed"]

T = TypeVar("T")
_Stamp = tuple[tuple[str, int, int, int, int], ...]


class Followed(Generic[T]):
    """`load(paths)` of the files `paths()` names, kept until a stat of one of them changes.
    `load` raises a `RegistryError` for files it cannot use."""

    def __init__(self, paths: Callable[[], tuple[Path, ...]], load: Callable[[tuple[Path, ...]], T]) -> None:
        self._paths = paths
        self._load = load
        self.generation = 0
        """How many times the files were loaded: 1 after the first `current()`, one more per change."""
        self._stamp: _Stamp | None = None
        self._loaded: tuple[T] | RegistryError | None = None
        """What the last load gave (boxed: a loaded value may itself be None), or how it failed."""

    def current(self) -> T:
        paths = self._paths()
        stamp = _stamp(paths)
        if stamp != self._stamp:
            self._stamp = stamp
            self.generation += 1
            try:
                self._loaded = (self._load(paths),)
            except RegistryError as error:
                self._loaded = error
        loaded = self._loaded
        if isinstance(loaded, RegistryError):
            raise loaded
        assert loaded is not None  # the first call loads
        return loaded[0]


def _stamp(paths: tuple[Path, ...]) -> _Stamp:
    stats = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            stats.append((str(path), -1, -1, -1, -1))  # absent: the load says what that means
            continue
        stats.append((str(path), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns))
    return tuple(stats)
