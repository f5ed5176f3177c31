"""Hostile image layers: each named case with the error catalogd or operator-controller reports
(`unpack_into`, the path both take), and the guarantee that nothing is left behind or outside."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pytest

from olm import oci

TAR = "application/vnd.oci.image.layer.v1.tar"
GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"
LIMITS = {"max_total_bytes": 64 << 10, "max_entries": 100}


def entry(
    name: str, type_: bytes = tarfile.REGTYPE, data: bytes = b"{}", link: str = "", mode: int = 0o644
) -> tuple[tarfile.TarInfo, bytes]:
    """A tar entry and its data (none but for regular files)."""
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = type_, link, mode
    if type_ != tarfile.REGTYPE:
        data = b""
    info.size = len(data)
    return info, data


def tar(*entries: tuple[tarfile.TarInfo, bytes], form: int = tarfile.PAX_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=form) as archive:
        for info, data in entries:
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def f(name: str, data: bytes = b"{}", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    return entry(name, data=data, mode=mode)


def sym(name: str, target: str) -> tuple[tarfile.TarInfo, bytes]:
    return entry(name, tarfile.SYMTYPE, link=target)


def hard(name: str, target: str) -> tuple[tarfile.TarInfo, bytes]:
    return entry(name, tarfile.LNKTYPE, link=target)


def special(name: str, type_: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return entry(name, type_)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def lying_size(declared: int) -> bytes:
    """A header declaring `declared` bytes of data, followed by 200."""
    info = tarfile.TarInfo("configs/big.json")
    info.size = declared
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape") + b"{}" * 100


BOMB = gz(tar(*(f(f"configs/{i}.json", b"\0" * (1 << 20)) for i in range(16))))
UNSAFE = oci.UnsafeContent
CORRUPT = oci.CorruptLayer

REFUSED: list[tuple[str, list[tuple[str, bytes]], str, type[Exception], str]] = [
    ("path-traversal", [(TAR, tar(f("configs/../../etc/passwd")))], "configs", UNSAFE, "'..' in a path"),
    (
        "path-traversal-in-the-middle",
        [(TAR, tar(f("configs/a/../../x")))],
        "configs",
        UNSAFE,
        "'..' in a path",
    ),
    ("absolute-path", [(TAR, tar(f("/configs/x.json")))], "configs", UNSAFE, "absolute paths"),
    ("nul-in-a-pax-name", [(TAR, tar(f("configs/\u00e9\0b.json")))], "configs", UNSAFE, "NUL character"),
    (
        "symlink-to-an-absolute-path",
        [(TAR, tar(sym("configs/l", "/etc/passwd")))],
        "configs",
        UNSAFE,
        "absolute path",
    ),
    ("symlink-climbing-out", [(TAR, tar(sym("configs/l", "../../outside")))], "configs", UNSAFE, "outside"),
    ("symlink-with-an-empty-target", [(TAR, tar(sym("configs/l", "")))], "configs", UNSAFE, "empty target"),
    (
        "symlink-loop",
        [(TAR, tar(sym("configs/a", "b"), sym("configs/b", "a")))],
        "configs",
        UNSAFE,
        "part of a loop",
    ),
    (
        "symlink-escape-through-another-link",
        [(TAR, tar(sym("configs/d", "."), sym("configs/e", "d/../..")))],
        "configs",
        UNSAFE,
        "outside",
    ),
    (
        "write-through-a-symlinked-directory",
        [(TAR, tar(sym("configs/l", "."), f("configs/l/x.json")))],
        "configs",
        UNSAFE,
        "symbolic link",
    ),
    (
        "whiteout-through-a-symlink",
        [(TAR, tar(sym("configs/l", "."), f("configs/l/.wh.x")))],
        "configs",
        UNSAFE,
        "symbolic link",
    ),
    (
        "hardlink-outside-the-selection",
        [(TAR, tar(hard("configs/h", "etc/passwd")))],
        "configs",
        UNSAFE,
        "outside",
    ),
    (
        "hardlink-to-nothing",
        [(TAR, tar(hard("configs/h", "configs/missing")))],
        "configs",
        UNSAFE,
        "not an extracted",
    ),
    (
        "hardlink-to-a-directory",
        [(TAR, tar(entry("configs/d", tarfile.DIRTYPE, mode=0o755), hard("configs/h", "configs/d")))],
        "configs",
        UNSAFE,
        "not an extracted regular file",
    ),
    ("zero-byte-layer", [(TAR, b"")], "configs", CORRUPT, "not a readable tar archive"),
    ("hardlink-absolute", [(TAR, tar(hard("configs/h", "/etc/passwd")))], "configs", UNSAFE, "outside"),
    (
        "character-device",
        [(TAR, tar(special("configs/null", tarfile.CHRTYPE)))],
        "configs",
        UNSAFE,
        "device files",
    ),
    (
        "block-device",
        [(TAR, tar(special("configs/sda", tarfile.BLKTYPE)))],
        "configs",
        UNSAFE,
        "device files",
    ),
    ("fifo", [(TAR, tar(special("configs/pipe", tarfile.FIFOTYPE)))], "configs", UNSAFE, "FIFOs"),
    ("unknown-entry-type", [(TAR, tar(special("configs/x", b"Z")))], "configs", UNSAFE, "is not supported"),
    ("selection-is-a-file", [(TAR, tar(f("configs")))], "configs", UNSAFE, "not a directory"),
    (
        "parent-is-a-file",
        [(TAR, tar(f("configs/f"), f("configs/f/x")))],
        "configs",
        UNSAFE,
        "not a directory",
    ),
    ("selection-with-dot-dot", [(TAR, tar(f("configs/x")))], "../configs", UNSAFE, "contains '..'"),
    ("gzip-bomb-past-the-size-cap", [(GZIP, BOMB)], "configs", UNSAFE, "larger than the limit"),
    (
        "too-many-entries",
        [(TAR, tar(*(f(f"configs/{i}") for i in range(101))))],
        "configs",
        UNSAFE,
        "more than 100 entries",
    ),
    (
        "declared-size-past-the-data",
        [(TAR, lying_size(4096))],
        "configs",
        CORRUPT,
        "not a readable tar archive",
    ),
    ("declared-size-of-a-terabyte", [(TAR, lying_size(1 << 40))], "configs", UNSAFE, "larger than the limit"),
    ("not-a-tar-at-all", [(TAR, b"hello, world" * 100)], "configs", CORRUPT, "not a readable tar archive"),
    (
        "truncated-gzip",
        [(GZIP, gz(tar(f("configs/x.json")))[:-12])],
        "configs",
        CORRUPT,
        "not a readable tar",
    ),
    ("gzip-of-garbage", [(GZIP, gz(b"\x01" * 1000))], "configs", CORRUPT, "not a readable tar archive"),
    (
        "labelled-gzip-but-plain-tar",
        [(GZIP, tar(f("configs/x.json")))],
        "configs",
        oci.UnsupportedMediaType,
        "labelled",
    ),
    (
        "unknown-layer-media-type",
        [("application/x-shellscript", tar(f("configs/x.json")))],
        "configs",
        oci.UnsupportedMediaType,
        "is not supported",
    ),
    (
        "selection-missing",
        [(TAR, tar(f("other/x.json")))],
        "configs",
        oci.EmptySelection,
        "is missing or empty",
    ),
    (
        "selection-whited-out-by-a-later-layer",
        [(TAR, tar(f("configs/x.json"))), (TAR, tar(f(".wh.configs")))],
        "configs",
        oci.EmptySelection,
        "is missing or empty",
    ),
]

ACCEPTED: list[tuple[str, list[tuple[str, bytes]], str, dict[str, str]]] = [
    (
        "setuid-and-read-only-modes-are-tamed",
        [(TAR, tar(f("configs/x", mode=0o6755), f("configs/ro", mode=0o444)))],
        "configs",
        {"x": "0o755", "ro": "0o644"},
    ),
    (
        "unsafe-entries-outside-the-selection-are-skipped",
        [(TAR, tar(f("/etc/passwd"), special("dev/null", tarfile.CHRTYPE), f("configs/x.json")))],
        "configs",
        {"x.json": "0o644"},
    ),
    (
        "gnu-long-names",
        [(TAR, tar(f("configs/" + "n" * 200 + ".json"), form=tarfile.GNU_FORMAT))],
        "configs",
        {"n" * 200 + ".json": "0o644"},
    ),
    (
        "opaque-whiteout-hides-lower-layers",
        [(TAR, tar(f("configs/old.json"))), (TAR, tar(f("configs/new.json"), f("configs/.wh..wh..opq")))],
        "configs",
        {"new.json": "0o644"},
    ),
    (
        "hardlink-to-itself",
        [(TAR, tar(f("configs/x.json"), hard("configs/x.json", "configs/x.json")))],
        "configs",
        {"x.json": "0o644"},
    ),
    (
        "whiteout-of-a-missing-file",
        [(TAR, tar(f("configs/x.json"), f("configs/.wh.ghost")))],
        "configs",
        {"x.json": "0o644"},
    ),
    (
        "later-layer-replaces-a-directory-with-a-file",
        [(TAR, tar(f("configs/d/x.json"))), (TAR, tar(f("configs/d", mode=0o600)))],
        "configs",
        {"d": "0o600"},
    ),
    (
        "gzip-layer-labelled-plain-tar",
        [(TAR, gz(tar(f("configs/x.json"))))],
        "configs",
        {"x.json": "0o644"},
    ),
]

CASES = len(REFUSED) + len(ACCEPTED)


def image(tmp_path: Path, layers: list[tuple[str, bytes]]) -> oci.PulledImage:
    descriptors = []
    for index, (media_type, data) in enumerate(layers):
        path = tmp_path / "blobs" / str(index)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        descriptors.append((oci.Descriptor(media_type, oci.Digest.of(data), len(data)), path))
    config = oci.Descriptor("application/vnd.oci.image.config.v1+json", oci.Digest.of(b"{}"), 2)
    return oci.PulledImage(
        reference=oci.Reference.parse(f"localhost:5000/hostile@{oci.Digest.of(repr(layers).encode())}"),
        manifest=oci.ImageManifest(oci.OCI_MANIFEST, config, tuple(d for d, _ in descriptors)),
        config={},
        layers=tuple(descriptors),
    )


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize(
    ("layers", "select", "error", "message"), [pytest.param(*case[1:], id=case[0]) for case in REFUSED]
)
async def test_refused(
    tmp_path: Path, layers: list[tuple[str, bytes]], select: str, error: type[Exception], message: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    with pytest.raises(error) as caught:
        await oci.unpack_into(
            image(tmp_path, layers), tmp_path / "unpack", oci.ExtractOptions(select=select, **LIMITS)
        )
    assert message in str(caught.value)
    assert listing(tmp_path / "unpack") == []  # no staging directory left behind
    assert listing(outside) == []
    assert listing(tmp_path) == ["blobs", "outside", "unpack"]


@pytest.mark.parametrize(
    ("layers", "select", "modes"), [pytest.param(*case[1:], id=case[0]) for case in ACCEPTED]
)
async def test_accepted(
    tmp_path: Path, layers: list[tuple[str, bytes]], select: str, modes: dict[str, str]
) -> None:
    final = await oci.unpack_into(
        image(tmp_path, layers), tmp_path / "unpack", oci.ExtractOptions(select=select, **LIMITS)
    )
    assert {p.name: oct(p.stat().st_mode & 0o7777) for p in final.iterdir()} == modes
