"""Deterministic layers: same files, same bytes; sorted entries, fixed times and owners, links kept."""

from __future__ import annotations

import gzip
import hashlib
import os
import tarfile
from pathlib import Path, PurePosixPath

import pytest

from olm_testkit.image import layer


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _members(path: Path) -> list[tarfile.TarInfo]:
    with tarfile.open(path, "r:gz") as tar:
        return tar.getmembers()


def _everything(root: Path) -> list[PurePosixPath]:
    return layer.with_parents(PurePosixPath(p.relative_to(root).as_posix()) for p in root.rglob("*"))


FILES = {"opt/olm/bin/tool": "#!/bin/sh\n", "opt/olm/lib/a.py": "a = 1\n", "opt/olm/lib/b.py": "b = 2\n"}


def test_same_files_give_the_same_bytes_whatever_their_mtimes_and_creation_order(tmp_path: Path) -> None:
    first = _tree(tmp_path / "one", FILES)
    second = _tree(tmp_path / "two", dict(reversed(FILES.items())))
    os.utime(second / "opt/olm/lib/a.py", (1_700_000_000, 1_700_000_000))
    a = layer.write(first, _everything(first), tmp_path / "a.tar.gz")
    b = layer.write(second, _everything(second), tmp_path / "b.tar.gz")
    assert a.path.read_bytes() == b.path.read_bytes()
    assert (a.digest, a.diff_id, a.size, a.unpacked_size) == (b.digest, b.diff_id, b.size, b.unpacked_size)


def test_a_changed_file_changes_the_digest(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", FILES)
    before = layer.write(root, _everything(root), tmp_path / "a.tar.gz")
    (root / "opt/olm/lib/a.py").write_text("a = 3\n")
    assert layer.write(root, _everything(root), tmp_path / "b.tar.gz").digest != before.digest


def test_digests_and_sizes_describe_the_compressed_blob_and_the_tar_inside(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", FILES)
    written = layer.write(root, _everything(root), tmp_path / "l.tar.gz")
    data = written.path.read_bytes()
    assert written.digest == "sha256:" + hashlib.sha256(data).hexdigest()
    assert written.size == len(data)
    plain = gzip.decompress(data)
    assert written.diff_id == "sha256:" + hashlib.sha256(plain).hexdigest()
    assert written.unpacked_size == len(plain)
    assert data[4:8] == b"\0\0\0\0", "the gzip header carries no time"
    assert not data[3] & 0x08, "the gzip header carries no file name"
    assert not (tmp_path / "l.tar.gz.partial").exists()


def test_entries_are_sorted_parents_first_with_fixed_times_and_root_owner(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", {"z/file": "z", "a/b/c": "c", "a-b": "x"})
    written = layer.write(root, _everything(root), tmp_path / "l.tar.gz")
    members = _members(written.path)
    assert [m.name for m in members] == ["a", "a/b", "a/b/c", "a-b", "z", "z/file"]
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(layer.MTIME, 0, 0, "", "")}


def test_modes_keep_execute_bits_and_drop_setuid_and_setgid(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", {"bin/tool": "x", "bin/su": "y", "etc/conf": "z"})
    (root / "bin/tool").chmod(0o755)
    (root / "bin/su").chmod(0o4755)
    (root / "etc/conf").chmod(0o600)
    (root / "etc").chmod(0o1777)
    members = {m.name: m for m in _members(layer.write(root, _everything(root), tmp_path / "l.tar.gz").path)}
    assert members["bin/tool"].mode == 0o755
    assert members["bin/su"].mode == 0o755
    assert members["etc/conf"].mode == 0o600
    assert members["etc"].mode == 0o1777, "directories keep the sticky bit (/tmp)"


def test_symbolic_links_stay_links_and_are_not_followed(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", {"usr/bin/python3.11": "elf"})
    (root / "bin").symlink_to("usr/bin")
    (root / "usr/bin/python").symlink_to("python3.11")
    members = layer.tree(root, PurePosixPath("bin")) + layer.tree(root, PurePosixPath("usr"))
    written = layer.write(root, members, tmp_path / "l.tar.gz")
    by_name = {m.name: m for m in _members(written.path)}
    assert by_name["bin"].issym()
    assert by_name["bin"].linkname == "usr/bin"
    assert by_name["usr/bin/python"].issym()
    assert by_name["usr/bin/python"].linkname == "python3.11"
    assert "bin/python3.11" not in by_name


def test_hard_links_inside_the_layer_point_at_the_first_name(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", {"usr/bin/gunzip": "same bytes"})
    os.link(root / "usr/bin/gunzip", root / "usr/bin/uncompress")
    by_name = {m.name: m for m in _members(layer.write(root, _everything(root), tmp_path / "l.tar.gz").path)}
    assert by_name["usr/bin/gunzip"].isfile()
    assert by_name["usr/bin/gunzip"].size == len("same bytes")
    assert by_name["usr/bin/uncompress"].islnk()
    assert by_name["usr/bin/uncompress"].linkname == "usr/bin/gunzip"


def test_owners_are_kept_only_when_asked(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another owner needs root")
    root = _tree(tmp_path / "t", {"home/nonroot/.keep": ""})
    os.chown(root / "home/nonroot", 65532, 65532)
    kept = layer.write(root, _everything(root), tmp_path / "k.tar.gz", ownership=layer.Ownership.KEEP)
    reset = layer.write(root, _everything(root), tmp_path / "r.tar.gz", ownership=layer.Ownership.ROOT)
    assert {(m.name, m.uid, m.gid) for m in _members(kept.path)} >= {("home/nonroot", 65532, 65532)}
    assert {(m.uid, m.gid) for m in _members(reset.path)} == {(0, 0)}


def test_special_files_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    os.mkfifo(root / "pipe")
    with pytest.raises(layer.LayerError, match="only directories, files and symbolic links"):
        layer.write(root, [PurePosixPath("pipe")], tmp_path / "l.tar.gz")


def test_with_parents_adds_every_directory_above_once() -> None:
    paths = [PurePosixPath("opt/olm/bin/a"), PurePosixPath("opt/olm/bin/b"), PurePosixPath("opt/olm/lib")]
    assert [str(p) for p in layer.with_parents(paths)] == [
        "opt",
        "opt/olm",
        "opt/olm/bin",
        "opt/olm/bin/a",
        "opt/olm/bin/b",
        "opt/olm/lib",
    ]


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/etc/passwd", id="absolute"),
        pytest.param("opt/../etc/passwd", id="dot-dot"),
        pytest.param(".", id="the-root-itself"),
    ],
)
def test_with_parents_refuses_paths_that_leave_the_root(path: str) -> None:
    with pytest.raises(layer.LayerError, match="relative to the root"):
        layer.with_parents([PurePosixPath(path)])


def test_tree_lists_mount_points_but_not_their_contents(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", {"dev/null": "", "dev/pts/0": "", "etc/hosts": ""})
    listed = {str(p) for p in layer.tree(root, PurePosixPath("dev"), keep_contents_of=[PurePosixPath("dev")])}
    assert listed == {"dev"}
    assert {str(p) for p in layer.tree(root, PurePosixPath("etc"))} == {"etc", "etc/hosts"}


def test_unpack_restores_what_was_written(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", FILES)
    (root / "opt/olm/bin/tool").chmod(0o755)
    (root / "opt/olm/bin/python").symlink_to("/usr/bin/python3.11")
    written = layer.write(root, _everything(root), tmp_path / "l.tar.gz")
    target = tmp_path / "unpacked"
    layer.unpack([written.path], target)
    assert (target / "opt/olm/lib/a.py").read_text() == "a = 1\n"
    assert (target / "opt/olm/bin/tool").stat().st_mode & 0o777 == 0o755
    assert os.readlink(target / "opt/olm/bin/python") == "/usr/bin/python3.11"


def test_layer_json_round_trips(tmp_path: Path) -> None:
    root = _tree(tmp_path / "t", FILES)
    written = layer.write(root, _everything(root), tmp_path / "l.tar.gz")
    assert layer.Layer.from_json(tmp_path, written.to_json()) == written
