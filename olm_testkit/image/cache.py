"""Layers kept between builds under `~/.cache/olm-py/image/<kind>-<key>/`.

A key is a digest of everything that shapes a layer, so a changed input gives a new entry instead of
a stale hit: the Debian layer is keyed by suite, package list, the bytes of the apt sources and the
recipe; the dependency layer by `uv.lock`, the Debian layer it was installed on and the recipe. An
entry is complete once its `layer.json` exists (it is written last, after the layer file was
renamed into place), and one lock per key stops two builds from doing the same work at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from olm_testkit import cachedir
from olm_testkit.image import layer as layers

BASE_RECIPE = "2"
"""Bumped when the way the Debian tree is made or trimmed changes (olm_testkit/image/base.py)."""
VENV_RECIPE = "2"
"""Bumped when the way the virtualenv layers are installed changes (olm_testkit/image/venv.py)."""
APP_ENTRIES_KEPT = 5
"""Project layers are cached too (keyed by the wheel), but only the newest few: each code change
makes a new one."""


def default_root() -> Path:
    return cachedir.root() / "image"


def digest_files(paths: Iterable[Path]) -> str:
    """A digest of the file names (not their directories) and bytes of `paths`, in the order given."""
    digest = hashlib.sha256()
    for path in paths:
        data = path.read_bytes()
        digest.update(f"{path.name}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _key(fields: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def base_key(*, suite: str, packages: Iterable[str], sources_digest: str) -> str:
    """The Debian layer's key; the order packages are named in does not matter."""
    return _key(
        {
            "suite": suite,
            "packages": sorted(set(packages)),
            "sources": sources_digest,
            "recipe": BASE_RECIPE,
        }
    )


def deps_key(*, lock_digest: str, base_diff_id: str) -> str:
    return _key({"lock": lock_digest, "base": base_diff_id, "recipe": VENV_RECIPE})


def app_key(*, wheel_digest: str, base_diff_id: str) -> str:
    return _key({"wheel": wheel_digest, "base": base_diff_id, "recipe": VENV_RECIPE})


@dataclass(frozen=True, kw_only=True)
class Cache:
    root: Path

    def directory(self, kind: str, key: str) -> Path:
        return self.root / f"{kind}-{key}"

    def load(self, kind: str, key: str) -> layers.Layer | None:
        directory = self.directory(kind, key)
        try:
            data = json.loads((directory / "layer.json").read_text())
        except FileNotFoundError:
            return None
        found = layers.Layer.from_json(directory, data)
        return found if found.path.is_file() else None

    def store(self, kind: str, key: str, built: layers.Layer) -> None:
        """Record `built`, which must have been written inside `directory(kind, key)`."""
        directory = self.directory(kind, key)
        if built.path.parent != directory:
            raise ValueError(f"{built.path} is not inside the cache entry {directory}")
        partial = directory / "layer.json.partial"
        partial.write_text(json.dumps(built.to_json(), indent=2) + "\n")
        partial.replace(directory / "layer.json")

    def prune(self, kind: str, *, keep: int) -> None:
        """Remove all but the `keep` most recently stored entries of `kind`."""
        entries = sorted(
            (p for p in self.root.glob(f"{kind}-*") if (p / "layer.json").exists()),
            key=lambda p: (p / "layer.json").stat().st_mtime,
            reverse=True,
        )
        for stale in entries[keep:]:
            shutil.rmtree(stale, ignore_errors=True)
            (self.root / f"{stale.name}.lock").unlink(missing_ok=True)

    @contextlib.contextmanager
    def locked(self, kind: str, key: str) -> Iterator[Path]:
        """Hold the entry's lock; yields its directory (created)."""
        directory = self.directory(kind, key)
        directory.mkdir(parents=True, exist_ok=True)
        with (self.root / f"{kind}-{key}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield directory
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
