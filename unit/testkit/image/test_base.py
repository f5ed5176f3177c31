"""The Debian tree is trimmed of what describes the build host, and gains the nonroot user."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from olm_testkit.image import base, shell


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_apt_sources_are_the_main_list_then_the_directory_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(
        tmp_path,
        {
            "sources.list": "deb file:/srv/debian bookworm main\n",
            "sources.list.d/b.sources": "Types: deb\n",
            "sources.list.d/a.list": "deb file:/srv/other bookworm main\n",
            "sources.list.d/c.list.disabled": "ignored\n",
        },
    )
    monkeypatch.setattr(base, "APT_SOURCES", (tmp_path / "sources.list", tmp_path / "sources.list.d"))
    assert [p.name for p in base.apt_sources()] == ["sources.list", "a.list", "b.sources"]


def test_an_empty_main_list_is_skipped_and_no_sources_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path, {"sources.list": "\n"})
    monkeypatch.setattr(base, "APT_SOURCES", (tmp_path / "sources.list", tmp_path / "sources.list.d"))
    with pytest.raises(shell.ImageBuildError, match="no apt sources"):
        base.apt_sources()


def test_the_key_follows_the_bytes_of_the_apt_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path, {"sources.list": "deb file:/srv/one bookworm main\n"})
    monkeypatch.setattr(base, "APT_SOURCES", (tmp_path / "sources.list", tmp_path / "sources.list.d"))
    before = base.key(base.RUNTIME_PACKAGES)
    assert base.key(base.BUILDER_PACKAGES) != before
    (tmp_path / "sources.list").write_text("deb file:/srv/two bookworm main\n")
    assert base.key(base.RUNTIME_PACKAGES) != before


def test_trim_removes_host_traces_logs_caches_and_old_bytecode(tmp_path: Path) -> None:
    root = _tree(
        tmp_path,
        {
            "etc/apt/sources.list.d/0000host.sources": "URIs: file:/srv/debian\n",
            "etc/hostname": "buildhost\n",
            "etc/resolv.conf": "nameserver 10.0.0.1\n",
            "etc/passwd": "root:x:0:0:root:/root:/bin/bash\n",
            "var/log/dpkg.log": "installed\n",
            "var/lib/dpkg/status": "Package: libc6\n",
            "var/lib/dpkg/status-old": "Package: libc6\n",
            "var/cache/ldconfig/aux-cache": "x",
            "usr/lib/python3.11/encodings/__pycache__/utf_8.cpython-311.pyc": "old",
            "usr/lib/python3.11/encodings/utf_8.py": "source",
            "usr/share/doc/libc6/copyright": "licence",
        },
    )
    base.trim(root)
    remaining = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert remaining == {
        "etc/passwd",
        "var/lib/dpkg/status",
        "usr/lib/python3.11/encodings/utf_8.py",
        "usr/share/doc/libc6/copyright",
    }
    assert (root / "var/log").is_dir()
    assert (root / "etc/apt/sources.list.d").is_dir()


def test_add_user_is_idempotent_and_gives_the_user_a_home(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving the home directory to 65532 needs root")
    root = _tree(tmp_path, {"etc/passwd": "root:x:0:0:root:/root:/bin/bash\n", "etc/group": "root:x:0:\n"})
    base.add_user(root)
    base.add_user(root)
    passwd = (root / "etc/passwd").read_text().splitlines()
    assert passwd[1:] == ["nonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin"]
    assert (root / "etc/group").read_text().splitlines()[1:] == ["nonroot:x:65532:"]
    home = (root / "home/nonroot").stat()
    assert (home.st_uid, home.st_gid, home.st_mode & 0o777) == (65532, 65532, 0o755)


def test_members_keep_mount_points_empty(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"dev/null": "", "proc/1/status": "", "etc/hosts": "", "tmp/.keep": ""})
    listed = {str(p) for p in base.members(root)}
    assert {"dev", "proc", "etc", "etc/hosts", "tmp", "tmp/.keep"} <= listed
    assert not {"dev/null", "proc/1", "proc/1/status"} & listed
