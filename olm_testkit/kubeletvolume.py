"""A directory updated the way the kubelet updates a mounted ConfigMap or Secret volume.

The kubelet writes each version of the volume into a fresh hidden directory, points the `..data`
symlink at it with an atomic rename, and keeps one symlink per key (`ca.crt -> ..data/ca.crt`):
a reader sees all of the old files or all of the new ones. The reload tests update CA directories
with `project` so the processes see exactly what a ConfigMap update looks like in a Pod.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path

__all__ = ["project"]

_DATA = "..data"


def project(directory: Path, files: Mapping[str, bytes]) -> None:
    """Make `directory` hold exactly `files` (name -> content), switching over atomically."""
    directory.mkdir(parents=True, exist_ok=True)
    version = directory / f"..{uuid.uuid4().hex}"
    version.mkdir()
    for name, content in files.items():
        (version / name).write_bytes(content)
    data = directory / _DATA
    previous = os.readlink(data) if data.is_symlink() else None
    staged = directory / f"{_DATA}_tmp"
    os.symlink(version.name, staged)
    os.replace(staged, data)
    for name in files:
        link = directory / name
        if not link.is_symlink():
            os.symlink(f"{_DATA}/{name}", link)
    for link in directory.iterdir():
        if link.is_symlink() and link.name != _DATA and link.name not in files:
            link.unlink()
    if previous is not None:
        shutil.rmtree(directory / previous)
