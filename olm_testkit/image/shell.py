"""The commands an image build runs: on the host, or chrooted into the tree being built.

Every command runs with no standard input (CI has none, and nothing here may prompt) and writes its
output to a log file; a failure raises `ImageBuildError` carrying the command and the log's tail.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from olm_runtime.testing import process

CHROOT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
"""The whole environment of a chrooted command: nothing from the host leaks in (PIP_*, proxies),
and Python writes no bytecode as a side effect of importing (it would be mtime-based and stop
`compile_python` from writing its own)."""


class ImageBuildError(RuntimeError):
    """A step of the image build failed; the message says which and why."""


def require(tool: str, package: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise ImageBuildError(f"{tool!r} is not installed: install Debian's `{package}` package")
    return found


def require_root(why: str) -> None:
    if os.geteuid() != 0:
        raise ImageBuildError(f"building the image needs root: {why}")


def run(
    argv: Sequence[str],
    *,
    log: Path,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"$ {' '.join(argv)}\n".encode())
        out.flush()
        result = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            check=False,
        )
    if result.returncode != 0:
        raise ImageBuildError(
            f"{' '.join(argv[:3])} ... exited with {result.returncode}; the end of {log}:\n"
            f"{process.log_tail(log)}"
        )


def chroot(rootfs: Path, argv: Sequence[str], *, log: Path, env: Mapping[str, str] | None = None) -> None:
    """Run `argv` inside `rootfs` (as root, with `CHROOT_ENV` plus `env`)."""
    require_root("commands run chrooted into the tree being built")
    run([require("chroot", "coreutils"), str(rootfs), *argv], log=log, env={**CHROOT_ENV, **(env or {})})


def compile_python(rootfs: Path, directory: str, *, log: Path) -> None:
    """Byte-compile `directory` inside the tree with the tree's Python. The .pyc files record a hash
    of their source instead of its mtime, and are trusted unchecked: layers carry fixed mtimes (an
    mtime-based .pyc would look stale and be recompiled, in memory, at every start) and nothing
    changes the sources of a read-only root file system."""
    compile_args = ["-m", "compileall", "-q", "-f", "-j0", "--invalidation-mode", "unchecked-hash"]
    chroot(rootfs, ["/usr/bin/python3.11", *compile_args, directory], log=log)


def prepare_chroot(rootfs: Path) -> None:
    """Give an unpacked tree the few device nodes commands expect; layers never carry them."""
    dev = rootfs / "dev"
    dev.mkdir(exist_ok=True)
    for name, minor in (("null", 3), ("zero", 5), ("random", 8), ("urandom", 9)):
        node = dev / name
        if not node.exists():
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, minor))
            node.chmod(0o666)
    # multiprocessing (compileall -j0) keeps its semaphores here.
    (dev / "shm").mkdir(exist_ok=True)
    (dev / "shm").chmod(0o1777)
