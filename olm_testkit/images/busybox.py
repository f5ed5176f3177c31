"""A busybox image made here from Debian's static binary (`busybox-static`), for workloads that
really run on the real nodes: no public registry is reachable, so the tests push it to the local
registry under the public name's repository (`library/busybox`), where the nodes' containerd
mirror of `docker.io` finds it (`olm_testkit.node.containerd`).

The image holds `/bin/busybox`, a link per applet the tests' Pods use, and an empty `/tmp`.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import tarfile
from pathlib import Path

from olm_testkit.images.layout import CONFIG_MEDIA_TYPE, LAYER_MEDIA_TYPE, Blob, Image, sha256_digest

BINARY = Path("/bin/busybox")
REPOSITORY = "library/busybox"
"""Where `busybox:<tag>` (that is, `docker.io/library/busybox:<tag>`) is looked up in a mirror."""
APPLETS = ("sh", "sleep", "touch", "rm", "test", "cat", "ls", "echo", "true", "false")


class BusyboxMissing(RuntimeError):
    """Debian's busybox-static is not installed."""


def version(binary: Path = BINARY) -> str:
    """`major.minor` of the binary (`BusyBox v1.35.0 (Debian …)` says 1.35): the image's tag."""
    if not binary.is_file():
        raise BusyboxMissing(f"{binary} is missing: install Debian's `busybox-static` package")
    banner = subprocess.run([str(binary)], capture_output=True, text=True, check=False).stdout
    found = re.search(r"BusyBox v(\d+)\.(\d+)", banner)
    if found is None:
        raise BusyboxMissing(f"{binary} does not say which BusyBox it is: {banner[:80]!r}")
    return f"{found[1]}.{found[2]}"


def image(binary: Path = BINARY) -> Image:
    """The image, byte for byte the same for the same binary."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory, mode in (("bin", 0o755), ("tmp", 0o1777)):
            tar.addfile(_entry(directory + "/", tarfile.DIRTYPE, mode))
        data = binary.read_bytes()
        member = _entry("bin/busybox", tarfile.REGTYPE, 0o755)
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
        for applet in APPLETS:
            link = _entry(f"bin/{applet}", tarfile.SYMTYPE, 0o777)
            link.linkname = "busybox"
            tar.addfile(link)
    layer = buffer.getvalue()
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": ["PATH=/bin"], "Cmd": ["sh"]},
        "rootfs": {"type": "layers", "diff_ids": [sha256_digest(layer)]},
        "history": [{"created_by": "olm_testkit.images.busybox", "comment": f"{binary} of busybox-static"}],
    }
    return Image(
        config=Blob(media_type=CONFIG_MEDIA_TYPE, data=json.dumps(config, separators=(",", ":")).encode()),
        layers=(Blob(media_type=LAYER_MEDIA_TYPE, data=gzip.compress(layer, mtime=0)),),
    )


def _entry(name: str, kind: bytes, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info
