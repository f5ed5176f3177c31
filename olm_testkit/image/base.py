"""The Debian layer: bookworm's Essential set, Debian's Python 3.11 and the CA certificates.

mmdebstrap installs the packages from the host's own apt sources (the same mirror or snapshot the
machine trusts), with dpkg told not to unpack documentation, manual pages and translations. The
tree is then trimmed of what only the install needed or what describes the build host (apt sources,
host name, resolver, logs, caches), Python's standard library is byte-compiled with hashes instead of
mtimes (layers carry fixed mtimes, and the root file system is read-only at run time), and the
`nonroot` user 65532 is added, so the layer is the same wherever the same packages were installed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from olm_testkit.image import cache as caches
from olm_testkit.image import layer as layers
from olm_testkit.image import shell

SUITE = "bookworm"
PYTHON = "/usr/bin/python3.11"
RUNTIME_PACKAGES = ("ca-certificates", "libpython3.11-stdlib", "python3.11-minimal")
BUILDER_PACKAGES = (*RUNTIME_PACKAGES, "python3.11-venv")
"""The runtime set plus ensurepip and Debian's pip wheel: what the Containerfile's build stage needs
to install uv into a throwaway virtualenv, for building the Containerfile from the base made here."""
USER = "nonroot"
UID = 65532

APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
MERGED_USR_HOOKS = Path("/usr/share/mmdebstrap/hooks/merged-usr")
"""Sets up the merged /usr before anything is unpacked, so apt does not pull in `usrmerge` (and
with it a full Perl, ~45 MB)."""

_DPKG_PATH_EXCLUDE = (
    "/usr/share/doc/*",
    "/usr/share/man/*",
    "/usr/share/info/*",
    "/usr/share/locale/*",
    "/usr/share/lintian/*",
)
_DPKG_PATH_INCLUDE = ("/usr/share/doc/*/copyright",)  # the licences stay with what they cover
_REMOVED = (
    "etc/apt/sources.list",
    "etc/apt/sources.list.d/*",
    "etc/hostname",
    "etc/resolv.conf",
    "var/cache/apt/*",
    "var/cache/debconf/*-old",
    "var/cache/ldconfig/aux-cache",
    "var/lib/apt/lists/*",
    "var/lib/dpkg/*-old",
    "var/log/*",
    "usr/lib/python3.11/**/__pycache__",
)
_EMPTY_MOUNT_POINTS = (PurePosixPath("dev"), PurePosixPath("proc"), PurePosixPath("sys"))
"""Kept as directories; the container runtime mounts over them (mmdebstrap made device nodes)."""


def apt_sources() -> tuple[Path, ...]:
    """The host's apt source files, in the order apt reads them."""
    main, directory = APT_SOURCES
    found = [main] if main.is_file() and main.read_text().strip() else []
    if directory.is_dir():
        found += sorted(p for p in directory.iterdir() if p.suffix in (".list", ".sources") and p.is_file())
    if not found:
        raise shell.ImageBuildError(f"no apt sources in {main} or {directory}/*.list|*.sources")
    return tuple(found)


def key(packages: Sequence[str], *, suite: str = SUITE) -> str:
    return caches.base_key(suite=suite, packages=packages, sources_digest=caches.digest_files(apt_sources()))


def ensure(cache: caches.Cache, *, packages: Sequence[str] = RUNTIME_PACKAGES, logs: Path) -> layers.Layer:
    """The cached Debian layer for `packages`, built first if there is none."""
    entry_key = key(packages)
    found = cache.load("base", entry_key)
    if found is not None:
        return found
    with cache.locked("base", entry_key) as directory:
        found = cache.load("base", entry_key)  # another build may have made it while we waited
        if found is not None:
            return found
        with tempfile.TemporaryDirectory(prefix="rootfs-", dir=directory) as scratch:
            rootfs = Path(scratch) / "rootfs"
            make_rootfs(rootfs, packages=packages, log=logs / "base.log")
            built = layers.write(
                rootfs, members(rootfs), directory / "layer.tar.gz", ownership=layers.Ownership.KEEP
            )
        cache.store("base", entry_key, built)
        return built


def make_rootfs(rootfs: Path, *, packages: Sequence[str], log: Path, suite: str = SUITE) -> None:
    shell.require_root("mmdebstrap installs as root and Python is run chrooted into the tree")
    mmdebstrap = shell.require("mmdebstrap", "mmdebstrap")
    log.unlink(missing_ok=True)
    shell.run(
        [
            mmdebstrap,
            "--mode=root",
            "--variant=essential",
            f"--include={','.join(sorted(packages))}",
            f"--hook-dir={MERGED_USR_HOOKS}",
            *(f"--dpkgopt=path-exclude={path}" for path in _DPKG_PATH_EXCLUDE),
            *(f"--dpkgopt=path-include={path}" for path in _DPKG_PATH_INCLUDE),
            suite,
            str(rootfs),
            *(str(source) for source in apt_sources()),
        ],
        log=log,
        env={**os.environ, "SOURCE_DATE_EPOCH": str(layers.MTIME)},
    )
    trim(rootfs)
    add_user(rootfs)
    shell.compile_python(rootfs, "/usr/lib/python3.11", log=log)


def trim(rootfs: Path) -> None:
    for pattern in _REMOVED:
        for path in sorted(rootfs.glob(pattern), reverse=True):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def add_user(rootfs: Path) -> None:
    """`nonroot` (65532:65532), so tools that look the user up (Python's `~`) find a home."""
    home = PurePosixPath("/home") / USER
    entries = {
        "etc/passwd": f"{USER}:x:{UID}:{UID}:{USER}:{home}:/usr/sbin/nologin\n",
        "etc/group": f"{USER}:x:{UID}:\n",
    }
    for name, line in entries.items():
        path = rootfs / name
        text = path.read_text()
        if line not in text:
            path.write_text(text + line)
    directory = rootfs / home.relative_to("/")
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o755)
    os.chown(directory, UID, UID)


def members(rootfs: Path) -> list[PurePosixPath]:
    found: list[PurePosixPath] = []
    for child in sorted(rootfs.iterdir()):
        found += layers.tree(rootfs, PurePosixPath(child.name), keep_contents_of=_EMPTY_MOUNT_POINTS)
    return found
