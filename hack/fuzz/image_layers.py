"""Fuzz target: image layers built from the fuzzer's bytes, unpacked the way catalogd and
operator-controller unpack images (`olm.oci` staging directory, then rename).

The bytes choose 1-3 layers of tar entries (names and link targets from a hostile vocabulary or
free text, every entry type including devices, FIFOs and unknown ones, modes with setuid bits,
sizes past the cap), a compression (none, gzip, a gzip label on plain tar) and damage (truncation,
a flipped byte). Promises checked:

- the only errors are `UnsafeContent`, `CorruptLayer`, `EmptySelection` and
  `UnsupportedMediaType`;
- nothing is written outside the unpack directory: a canary directory beside it stays as it was,
  and the workspace holds nothing new;
- a failed unpack leaves nothing behind (no staging directory);
- a finished tree holds only directories, regular files and links resolving inside it, with no
  setuid, setgid or sticky bit and every file owner-readable and -writable.
"""

from __future__ import annotations

import atexit
import gzip
import hashlib
import io
import os
import shutil
import stat
import tarfile
import tempfile
from pathlib import Path

from hack.fuzz._input import Input
from olm import oci
from olm.oci._unpack import _extract

MAX_TOTAL_BYTES = 64 << 10
OPTIONS_BY_SELECT = {
    select: oci.ExtractOptions(select=select, max_total_bytes=MAX_TOTAL_BYTES, max_entries=64)
    for select in ("", "configs", "/configs/", "configs/sub", "../configs")
}
TAR = "application/vnd.oci.image.layer.v1.tar"
GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
TYPES = (
    tarfile.REGTYPE,
    tarfile.REGTYPE,
    tarfile.DIRTYPE,
    tarfile.SYMTYPE,
    tarfile.LNKTYPE,
    tarfile.CHRTYPE,
    tarfile.BLKTYPE,
    tarfile.FIFOTYPE,
    tarfile.CONTTYPE,
    b"Z",
)
PARTS = ("configs", "sub", "a", "b.json", "..", ".", "", ".wh.a", ".wh..wh..opq", ".wh.configs", "x" * 120)

# One workspace per process (under TMPDIR, which the runner points at a RAM disk when there is
# one): `unpack/` is the parent directory the unpack writes into, `outside/` a canary that no
# layer may touch, `blobs/` the layer files.
WORKSPACE = Path(tempfile.mkdtemp(prefix="fuzz-layers-"))
atexit.register(shutil.rmtree, WORKSPACE, ignore_errors=True)
OUTSIDE = WORKSPACE / "outside"
TARGETS = (
    "a",
    "configs/a",
    "../a",
    "../../outside/canary",
    "../../../outside",
    "/etc/passwd",
    str(OUTSIDE / "canary"),
    ".",
    "sub/../..",
)
DIGEST = oci.Digest.of(b"fuzz")
SEEDS = (bytes(range(256)), bytes(range(255, -1, -1)), b"\x01\x03" * 100, b"\x02\x00\x05" * 80, b"\x00" * 64)


def _name(source: Input) -> str:
    how = source.number(4)
    if how == 0:
        return source.text(40)
    if how == 1:
        return str(OUTSIDE / source.choice(PARTS))
    prefix = source.choice(("", "", "./", "/"))
    return prefix + "/".join(source.choice(PARTS) for _ in range(1 + source.number(4)))


def _layer(source: Input) -> bytes:
    buffer = io.BytesIO()
    form = source.choice((tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT))
    with tarfile.open(fileobj=buffer, mode="w", format=form) as archive:
        for _ in range(source.number(7)):
            info = tarfile.TarInfo(_name(source))
            info.type = source.choice(TYPES)
            info.mode = source.number(0o10000)
            info.linkname = source.choice(TARGETS) if source.number(3) else source.text(20)
            data = b""
            if info.type in (tarfile.REGTYPE, tarfile.CONTTYPE):
                data = source.chunk(64) if source.number(4) else b"\0" * (source.number(96) << 10)
            info.size = len(data)
            try:
                archive.addfile(info, io.BytesIO(data))
            except (ValueError, UnicodeError):
                continue  # a name this tar format cannot hold: the writer's limit, not the reader's
    raw = buffer.getvalue()
    damage = source.number(8)
    if damage == 1:
        raw = raw[: source.number(len(raw) + 1)]
    elif damage == 2 and raw:
        at = source.number(len(raw))
        raw = raw[:at] + bytes([raw[at] ^ (1 + source.number(255))]) + raw[at + 1 :]
    return raw


def _pulled(source: Input, blobs: Path) -> oci.PulledImage:
    layers: list[tuple[oci.Descriptor, Path]] = []
    for index in range(1 + source.number(3)):
        raw = _layer(source)
        compression = source.number(4)
        media_type = GZIP if compression else TAR
        if compression in (1, 2):
            raw = gzip.compress(raw, compresslevel=1, mtime=0)
        if compression == 2:
            raw = raw[: len(raw) - source.number(16)]
        path = blobs / str(index)
        path.write_bytes(raw)
        digest = oci.Digest("sha256", hashlib.sha256(raw).hexdigest())
        layers.append((oci.Descriptor(media_type, digest, len(raw)), path))
    config = oci.Descriptor("application/vnd.oci.image.config.v1+json", DIGEST, 4)
    manifest = oci.ImageManifest(oci.OCI_MANIFEST, config, tuple(d for d, _ in layers))
    reference = oci.Reference.parse(f"localhost:5000/fuzz@{DIGEST}")
    return oci.PulledImage(reference=reference, manifest=manifest, config={}, layers=tuple(layers))


def _reset() -> None:
    """Empty the workspace but for a fresh canary and layer directory (after the first run, only
    the unpack directory has anything to remove: the previous run checked the rest)."""
    for child in WORKSPACE.iterdir():
        if child.name not in ("blobs", "outside"):
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    if not (OUTSIDE / "canary").is_file():
        OUTSIDE.mkdir(exist_ok=True)
        (OUTSIDE / "canary").write_text("canary")
    (WORKSPACE / "blobs").mkdir(exist_ok=True)


def one_input(data: bytes) -> None:
    _reset()
    source = Input(data)
    options = OPTIONS_BY_SELECT[source.choice(tuple(OPTIONS_BY_SELECT))]
    pulled = _pulled(source, WORKSPACE / "blobs")
    parent = WORKSPACE / "unpack"
    final = parent / "final"
    try:
        _extract(pulled, final, options)
    except (oci.UnsafeContent, oci.CorruptLayer, oci.EmptySelection, oci.UnsupportedMediaType):
        leftovers = sorted(p.name for p in parent.iterdir()) if parent.exists() else []
        assert leftovers == [], leftovers
    else:
        assert sorted(p.name for p in parent.iterdir()) == ["final"]
        _check_tree(final)
    assert sorted(p.name for p in WORKSPACE.iterdir()) == ["blobs", "outside", "unpack"]
    assert sorted(p.name for p in OUTSIDE.iterdir()) == ["canary"]
    assert (OUTSIDE / "canary").read_text() == "canary"


def _check_tree(root: Path) -> None:
    real_root = root.resolve()
    for directory, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            path = Path(directory, name)
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                assert path.resolve().is_relative_to(real_root), path
                continue
            assert stat.S_ISDIR(mode) or stat.S_ISREG(mode), (path, oct(mode))
            assert mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX) == 0, (path, oct(mode))
            assert mode & 0o600 == 0o600, (path, oct(mode))
