"""Properties of layer extraction over generated tarballs: valid trees round-trip; hostile ones
(traversal, absolute paths, escaping links, devices, FIFOs, lying sizes, bombs) end in a declared
error, and nothing is ever written outside the unpack directory or left half-done."""

from __future__ import annotations

import asyncio
import gzip
import os
import stat
import tarfile
import tempfile
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from olm import oci

GZIP_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
TAR_LAYER = "application/vnd.oci.image.layer.v1.tar"
DECLARED = (oci.UnsafeContent, oci.CorruptLayer, oci.EmptySelection, oci.UnsupportedMediaType)
LIMITS = {"max_total_bytes": 32 << 10, "max_entries": 50}

segments = st.from_regex(r"[a-z0-9_][a-z0-9_.-]{0,8}", fullmatch=True).filter(
    lambda s: s not in (".", "..") and not s.startswith(".wh.")
)
relative_paths = st.lists(segments, min_size=1, max_size=3).map("/".join)


def entry(
    name: str, type_: bytes = tarfile.REGTYPE, data: bytes = b"", link: str = "", mode: int = 0o644
) -> bytes:
    """One tar entry, serialised; `data` may be shorter than a regular file's declared size."""
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = type_, link, mode
    info.size = len(data) if type_ == tarfile.REGTYPE else 0
    header = info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    padding = b"\0" * (-len(data) % tarfile.BLOCKSIZE)
    return header + data + padding


def archive(*entries: bytes) -> bytes:
    return b"".join(entries) + b"\0" * (2 * tarfile.BLOCKSIZE)


def lying_size(name: str, declared: int, actual: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = declared
    return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape") + actual


@st.composite
def valid_trees(draw: st.DrawFn) -> dict[str, bytes]:
    """Files under `configs/` whose paths never use a file as a directory."""
    files: dict[str, bytes] = {}
    for path in draw(st.lists(relative_paths, min_size=1, max_size=8, unique=True)):
        parents = {"/".join(path.split("/")[:i]) for i in range(1, path.count("/") + 1)}
        if parents & files.keys() or any(p.startswith(path + "/") for p in files):
            continue
        files[path] = draw(st.binary(max_size=300))
    return files


@settings(max_examples=40, deadline=None)
@given(valid_trees(), st.booleans())
def test_valid_trees_round_trip(files: dict[str, bytes], compressed: bool) -> None:
    blob = archive(*(entry(f"configs/{path}", data=data) for path, data in files.items()))
    with tempfile.TemporaryDirectory() as scratch:
        final = unpack(Path(scratch), [blob], compressed=compressed)
        assert isinstance(final, Path), final
        found = {p.relative_to(final).as_posix(): p.read_bytes() for p in final.rglob("*") if p.is_file()}
        assert found == files


hostile_names = st.sampled_from(
    [
        "configs/../../escape",
        "/configs/abs",
        "configs/a/../../../x",
        "../configs/x",
        "configs/\0nul",
        "configs/ok",
    ]
)
link_targets = st.sampled_from(
    ["/etc/passwd", "../../outside/canary", "../..", "a/../../..", "", ".", "ok", "configs/ok", "../outside"]
)


@st.composite
def hostile_entries(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["file", "symlink", "hardlink", "device", "fifo", "lie", "bomb", "dir"]))
    name = draw(hostile_names | relative_paths.map(lambda p: f"configs/{p}"))
    if kind == "symlink":
        return entry(name, tarfile.SYMTYPE, link=draw(link_targets))
    if kind == "hardlink":
        return entry(name, tarfile.LNKTYPE, link=draw(link_targets))
    if kind == "device":
        return entry(name, draw(st.sampled_from([tarfile.CHRTYPE, tarfile.BLKTYPE])))
    if kind == "fifo":
        return entry(name, tarfile.FIFOTYPE)
    if kind == "lie":
        return lying_size(name, draw(st.integers(1, 1 << 40)), draw(st.binary(max_size=600)))
    if kind == "bomb":
        return entry(name, data=b"\0" * (64 << 10))  # compresses to almost nothing, twice the cap
    if kind == "dir":
        return entry(name, tarfile.DIRTYPE, mode=0o7777)
    return entry(name, data=draw(st.binary(max_size=100)), mode=draw(st.integers(0, 0o7777)))


def unpack(
    workspace: Path, layers: list[bytes], *, compressed: bool, select: str = "configs"
) -> Path | Exception:
    """Unpack like catalogd does (`unpack_into`): the directory it made, or the error it raised."""
    descriptors = []
    for index, raw in enumerate(layers):
        data = gzip.compress(raw, mtime=0) if compressed else raw
        path = workspace / "blobs" / str(index)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        descriptors.append(
            (oci.Descriptor(GZIP_LAYER if compressed else TAR_LAYER, oci.Digest.of(data), len(data)), path)
        )
    config = oci.Descriptor("application/vnd.oci.image.config.v1+json", oci.Digest.of(b"{}"), 2)
    manifest = oci.ImageManifest(oci.OCI_MANIFEST, config, tuple(d for d, _ in descriptors))
    image = oci.PulledImage(
        reference=oci.Reference.parse(f"localhost:5000/x@{oci.Digest.of(b''.join(layers))}"),
        manifest=manifest,
        config={},
        layers=tuple(descriptors),
    )
    options = oci.ExtractOptions(select=select, **LIMITS)
    try:
        return asyncio.run(oci.unpack_into(image, workspace / "unpack", options))
    except DECLARED as error:
        return error


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(hostile_entries(), min_size=1, max_size=5).map(lambda e: archive(*e)), min_size=1, max_size=2
    ),
    st.booleans(),
    st.sampled_from(["configs", ""]),
)
@example([archive(entry("configs/link", tarfile.SYMTYPE, link=""))], False, "configs")  # empty target
@example([archive(entry("configs/\u00e9\0b"))], False, "configs")  # NUL in a PAX name
@example(
    [archive(entry("configs/a", tarfile.SYMTYPE, link="b"), entry("configs/b", tarfile.SYMTYPE, link="a"))],
    False,
    "configs",
)  # a loop of links
def test_hostile_layers_never_escape(layers: list[bytes], compressed: bool, select: str) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch)
        outside = workspace / "outside"
        outside.mkdir()
        (outside / "canary").write_text("canary")
        outcome = unpack(workspace, layers, compressed=compressed, select=select)
        assert sorted(p.name for p in workspace.iterdir()) == ["blobs", "outside", "unpack"]
        assert [p.name for p in outside.iterdir()] == ["canary"]
        assert (outside / "canary").read_text() == "canary"
        unpacked = sorted((workspace / "unpack").iterdir())
        if isinstance(outcome, Exception):
            assert unpacked == [], outcome  # no staging directory left behind
            return
        assert unpacked == [outcome]
        for path in outcome.rglob("*"):
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                assert path.resolve().is_relative_to(outcome.resolve())
            else:
                assert stat.S_ISDIR(mode) or stat.S_ISREG(mode)
                assert mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX) == 0
                assert os.access(path, os.R_OK | os.W_OK)


def test_a_gzip_bomb_stops_at_the_size_cap() -> None:
    bomb = archive(*(entry(f"configs/{i}", data=b"\0" * (1 << 20)) for i in range(64)))
    assert len(gzip.compress(bomb)) < 100 << 10  # 64 MiB of content in well under 100 KiB
    with tempfile.TemporaryDirectory() as scratch:
        outcome = unpack(Path(scratch), [bomb], compressed=True)
        assert isinstance(outcome, oci.UnsafeContent)
        assert "larger than the limit of 32768 bytes" in str(outcome)


def test_a_declared_size_past_the_data_is_a_corrupt_layer() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        outcome = unpack(Path(scratch), [lying_size("configs/x", 1 << 12, b"short")], compressed=False)
        assert isinstance(outcome, oci.CorruptLayer), outcome


def test_an_entry_declaring_more_than_the_limit_is_refused_even_when_skipped() -> None:
    """Before the fix, reaching the next header meant reading a terabyte of nothing past the end of
    the stream, block by block: hours of CPU for a few hundred bytes of layer."""
    with tempfile.TemporaryDirectory() as scratch:
        outcome = unpack(Path(scratch), [lying_size("elsewhere/x", 1 << 40, b"short")], compressed=True)
        assert isinstance(outcome, oci.UnsafeContent), outcome
        assert f"entry 'elsewhere/x': declares {1 << 40} bytes, larger than the limit" in str(outcome)
