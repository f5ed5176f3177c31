"""The virtualenv at /opt/olm: the locked dependencies in one layer, the project in the next.

Both are installed the same way, into a virtualenv made at its final path by the image's own Python
(chrooted into the unpacked Debian layer), so console scripts start with `#!/opt/olm/bin/python` and
work as they are. pip runs from Debian's pip wheel (`python3-pip-whl`) and is never installed into
the virtualenv; nothing is fetched inside the tree: the wheels were downloaded on the host for the
image's platform (CPython 3.11, the glibc of the Debian layer) and are checked against the hashes of
`uv.lock`. Everything is byte-compiled with hashes instead of mtimes, since layers carry fixed
mtimes and the root file system is read-only at run time.

The project layer is whatever installing the project's wheel (without dependencies) adds to an
empty virtualenv, so it does not depend on the dependency layer and is rebuilt on its own.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from olm_testkit.image import layer as layers
from olm_testkit.image import shell

ROOT = PurePosixPath("/opt/olm")
SITE_PACKAGES = ROOT / "lib/python3.11/site-packages"
PIP_WHEELS = Path("/usr/share/python-wheels")
_STAGING = PurePosixPath("/tmp/olm-image")
"""Where wheels and requirements are copied inside the tree for pip; never part of a layer."""
_ACTIVATE_SCRIPTS = ("activate", "activate.csh", "activate.fish", "Activate.ps1")
_PIP_ENV = {"PIP_NO_CACHE_DIR": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}


def pip_wheel() -> Path:
    wheels = sorted(PIP_WHEELS.glob("pip-*.whl"))
    if not wheels:
        raise shell.ImageBuildError(
            f"no pip wheel in {PIP_WHEELS}: install Debian's `python3-pip-whl` package"
        )
    return wheels[-1]


def glibc_version(dpkg_status: str) -> tuple[int, int]:
    """The glibc version of a Debian tree, from its dpkg status (`libc6`'s upstream version)."""
    for stanza in dpkg_status.split("\n\n"):
        if re.search(r"^Package: libc6$", stanza, re.MULTILINE):
            found = re.search(r"^Version: (?:\d+:)?(\d+)\.(\d+)", stanza, re.MULTILINE)
            if found:
                return int(found.group(1)), int(found.group(2))
    raise shell.ImageBuildError("the Debian layer has no libc6 in its dpkg status")


def manylinux_platforms(glibc: tuple[int, int], machine: str = "x86_64") -> list[str]:
    """Every manylinux platform tag a wheel may carry to run on `glibc`, newest first: pip's
    `--platform` takes the tags literally, so the older ones must be named too."""
    major, minor = glibc
    tags = [f"manylinux_{major}_{m}_{machine}" for m in range(minor, 4, -1)]
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    return tags + [f"{name}_{machine}" for m, name in legacy.items() if m <= minor]


def export_requirements(project_dir: Path, destination: Path, *, log: Path) -> None:
    """The locked runtime dependencies with their hashes (no dev or bench group, not the workspace's
    own packages: their wheels are the app layer)."""
    uv = shell.require("uv", "uv (hack/install-deps.sh installs it)")
    shell.run(
        [
            uv,
            "export",
            "--frozen",
            "--no-dev",
            "--no-default-groups",
            "--no-emit-workspace",
            "--format",
            "requirements-txt",
            "--quiet",
            "--output-file",
            str(destination),
        ],
        log=log,
        cwd=project_dir,
    )


def download_wheels(requirements: Path, destination: Path, *, glibc: tuple[int, int], log: Path) -> None:
    """Binary wheels of the requirements for the image's Python and glibc, hash-checked."""
    platforms = [arg for tag in manylinux_platforms(glibc) for arg in ("--platform", tag)]
    shell.run(
        [
            sys.executable,
            str(pip_wheel() / "pip"),
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--implementation=cp",
            "--python-version=3.11",
            "--abi=cp311",
            *platforms,
            "--require-hashes",
            "--dest",
            str(destination),
            "--requirement",
            str(requirements),
        ],
        log=log,
        env={**os.environ, **_PIP_ENV},
    )


def build_wheels(project_dir: Path, destination: Path, *, log: Path) -> list[Path]:
    """The wheel of every workspace member: olm-py and olm-runtime, which olm-py depends on."""
    uv = shell.require("uv", "uv (hack/install-deps.sh installs it)")
    destination.mkdir(parents=True, exist_ok=True)
    shell.run(
        [uv, "build", "--wheel", "--all-packages", "--quiet", "--out-dir", str(destination)],
        log=log,
        cwd=project_dir,
    )
    wheels = sorted(destination.glob("*.whl"))
    if len(wheels) != 2:
        raise shell.ImageBuildError(f"uv build left {len(wheels)} wheels in {destination}, expected two")
    return wheels


def create(rootfs: Path, *, log: Path) -> None:
    """An empty virtualenv at `ROOT` made by the tree's Python, without pip or activate scripts."""
    shell.prepare_chroot(rootfs)
    shell.chroot(rootfs, ["/usr/bin/python3.11", "-m", "venv", "--without-pip", str(ROOT)], log=log)
    for name in _ACTIVATE_SCRIPTS:
        (_inside(rootfs, ROOT) / "bin" / name).unlink()


def install(rootfs: Path, pip_args: Sequence[str], files: Sequence[Path], *, log: Path) -> None:
    """`pip install` into the virtualenv, offline, with `files` (wheels, requirements) staged at
    `_STAGING` (name them in `pip_args` there), then byte-compile site-packages."""
    staging = _inside(rootfs, _STAGING)
    staging.mkdir(parents=True)
    try:
        for source in files:
            target = staging / source.name
            (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)
        shutil.copy2(pip_wheel(), staging / "pip.whl")
        shell.chroot(
            rootfs,
            [
                str(ROOT / "bin/python"),
                str(_STAGING / "pip.whl/pip"),
                "install",
                "--no-index",
                "--no-deps",
                "--no-compile",
                "--only-binary=:all:",
                *pip_args,
            ],
            log=log,
            env=_PIP_ENV,
        )
    finally:
        shutil.rmtree(staging)
    shell.compile_python(rootfs, str(SITE_PACKAGES), log=log)


def staged(name: str) -> str:
    """The path inside the tree of a file given to `install`."""
    return str(_STAGING / name)


def contents(rootfs: Path) -> list[PurePosixPath]:
    """Everything under `ROOT`, relative to the tree."""
    return layers.tree(rootfs, ROOT.relative_to("/"))


def _inside(rootfs: Path, path: PurePosixPath) -> Path:
    return rootfs / path.relative_to("/")
