"""Applying layers: only the selected directory, whiteouts honoured, and every escape refused.

Each layer is a tar crafted by hand, the way a hostile image would be built.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from olm import oci


@dataclass(frozen=True)
class E:
    """One tar entry: a file (`data`), a directory, a link or a special file."""

    name: str
    data: bytes | None = None
    type: bytes = tarfile.REGTYPE
    link: str = ""
    mode: int = 0o644


def d(name: str) -> E:
    return E(name, type=tarfile.DIRTYPE, mode=0o755)


def f(name: str, data: str = "{}") -> E:
    return E(name, data.encode())


def sym(name: str, target: str) -> E:
    return E(name, type=tarfile.SYMTYPE, link=target)


def hard(name: str, target: str) -> E:
    return E(name, type=tarfile.LNKTYPE, link=target)


def layer(*entries: E) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.type = entry.type
            info.mode = entry.mode
            info.linkname = entry.link
            data = entry.data or b""
            info.size = len(data) if entry.type == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(data) if entry.type == tarfile.REGTYPE else None)
    buffer.seek(0)
    return buffer


def extract(tmp_path: Path, *layers: io.BytesIO, select: str = "configs", **options: int) -> Path:
    dest = tmp_path / "out"
    dest.mkdir()
    oci.apply_layers(layers, dest, oci.ExtractOptions(select=select, **options))
    return dest


def tree(root: Path) -> dict[str, str]:
    """Relative path -> file content, `->target` for links, `/` for directories."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[key] = "->" + str(path.readlink())
        elif path.is_dir():
            found[key] = "/"
        else:
            found[key] = path.read_text()
    return found


def test_only_the_selected_directory_is_extracted_and_re_rooted(tmp_path: Path) -> None:
    dest = extract(
        tmp_path,
        layer(d("configs"), f("configs/p/catalog.json", "A"), f("etc/passwd", "root"), f("configs.txt", "x")),
        select="/configs/",
    )
    assert tree(dest) == {"p": "/", "p/catalog.json": "A"}


def test_whole_image_when_nothing_is_selected(tmp_path: Path) -> None:
    dest = extract(
        tmp_path, layer(f("manifests/csv.yaml", "c"), f("metadata/annotations.yaml", "a")), select=""
    )
    assert tree(dest) == {
        "manifests": "/",
        "manifests/csv.yaml": "c",
        "metadata": "/",
        "metadata/annotations.yaml": "a",
    }


def test_later_layers_override_and_whiteouts_remove(tmp_path: Path) -> None:
    lower = layer(f("configs/a.json", "old"), f("configs/b.json", "B"), f("configs/dir/c.json", "C"))
    upper = layer(
        f("configs/a.json", "new"),
        f("configs/.wh.b.json"),
        f("configs/dir/.wh..wh..opq"),
        f("configs/dir/d.json", "D"),
    )
    assert tree(extract(tmp_path, lower, upper)) == {"a.json": "new", "dir": "/", "dir/d.json": "D"}


def test_opaque_whiteout_keeps_entries_of_its_own_layer(tmp_path: Path) -> None:
    lower = layer(f("configs/old.json", "O"))
    upper = layer(f("configs/new.json", "N"), f("configs/.wh..wh..opq"))
    assert tree(extract(tmp_path, lower, upper)) == {"new.json": "N"}


def test_whiteout_of_the_selected_directory_empties_it(tmp_path: Path) -> None:
    lower = layer(f("configs/old.json", "O"))
    upper = layer(f(".wh.configs"), f("configs/new.json", "N"))
    assert tree(extract(tmp_path, lower, upper)) == {"new.json": "N"}


def test_symlinks_and_hardlinks_inside_are_kept(tmp_path: Path) -> None:
    dest = extract(
        tmp_path,
        layer(
            f("configs/p/a.json", "A"),
            sym("configs/p/link.json", "a.json"),
            hard("configs/q.json", "configs/p/a.json"),
        ),
    )
    assert tree(dest) == {"p": "/", "p/a.json": "A", "p/link.json": "->a.json", "q.json": "A"}


def test_modes_drop_special_bits_and_stay_owner_writable(tmp_path: Path) -> None:
    dest = extract(
        tmp_path, layer(E("configs/x.json", b"{}", mode=0o6755), E("configs/ro.json", b"{}", mode=0o444))
    )
    assert (dest / "x.json").stat().st_mode & 0o7777 == 0o755
    assert (dest / "ro.json").stat().st_mode & 0o7777 == 0o644


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        pytest.param([f("configs/../etc/passwd")], r"'\.\.' in a path", id="traversal"),
        pytest.param([f("/configs/x.json")], "absolute paths", id="absolute"),
        pytest.param([sym("configs/link", "/etc/passwd")], "absolute path", id="symlink-absolute"),
        pytest.param([sym("configs/link", "../../etc/passwd")], "outside", id="symlink-relative-escape"),
        pytest.param([sym("configs/p/link", "../../x")], "outside", id="symlink-nested-escape"),
        pytest.param(
            [d("configs/d"), sym("configs/d/self", "."), sym("configs/e", "d/self/../..")],
            "outside",
            id="symlink-escape-through-another-link",
        ),
        pytest.param(
            [sym("configs/link", "."), f("configs/link/x.json")], "symbolic link", id="write-through-symlink"
        ),
        pytest.param(
            [hard("configs/h", "etc/passwd")], "outside the extracted directory", id="hardlink-outside"
        ),
        pytest.param([hard("configs/h", "configs/../etc/passwd")], "outside", id="hardlink-traversal"),
        pytest.param(
            [hard("configs/h", "configs/missing")], "not an extracted regular file", id="hardlink-missing"
        ),
        pytest.param([E("configs/null", type=tarfile.CHRTYPE)], "device files", id="char-device"),
        pytest.param([E("configs/sda", type=tarfile.BLKTYPE)], "device files", id="block-device"),
        pytest.param([E("configs/pipe", type=tarfile.FIFOTYPE)], "FIFOs", id="fifo"),
        pytest.param([f("configs")], "not a directory", id="selection-is-a-file"),
        pytest.param([f("configs/f"), f("configs/f/x")], "not a directory", id="parent-is-a-file"),
    ],
)
def test_unsafe_entries_are_refused(tmp_path: Path, entries: list[E], message: str) -> None:
    with pytest.raises(oci.UnsafeContent, match=message):
        extract(tmp_path, layer(*entries))
    assert not (tmp_path / "etc").exists()


def test_whiteout_through_a_symlink_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep")
    with pytest.raises(oci.UnsafeContent, match="symbolic link"):
        extract(tmp_path, layer(sym("configs/l", "."), f("configs/l/.wh.precious")))
    assert (outside / "precious").read_text() == "keep"


def test_unsafe_entries_outside_the_selection_are_skipped_unread(tmp_path: Path) -> None:
    dest = extract(
        tmp_path,
        layer(
            sym("usr/lib/x", "/etc/alternatives/x"), E("dev/null", type=tarfile.CHRTYPE), f("configs/a.json")
        ),
    )
    assert tree(dest) == {"a.json": "{}"}


def test_total_size_is_capped(tmp_path: Path) -> None:
    with pytest.raises(oci.UnsafeContent, match="larger than the limit of 10 bytes"):
        extract(
            tmp_path, layer(f("configs/a.json", "123456"), f("configs/b.json", "123456")), max_total_bytes=10
        )


def test_entry_count_is_capped(tmp_path: Path) -> None:
    with pytest.raises(oci.UnsafeContent, match="more than 2 entries"):
        extract(tmp_path, layer(f("configs/a"), f("configs/b"), f("configs/c")), max_entries=2)


def test_selection_with_dot_dot_is_refused(tmp_path: Path) -> None:
    with pytest.raises(oci.UnsafeContent, match=r"contains '\.\.'"):
        extract(tmp_path, layer(f("configs/a")), select="/configs/../etc")
