"""Cache keys change exactly when a layer's inputs change; entries are complete or absent."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from olm_testkit.image import cache, layer

PACKAGES = ("ca-certificates", "libpython3.11-stdlib", "python3.11-minimal")


def _base_key(
    *, suite: str = "bookworm", packages: tuple[str, ...] = PACKAGES, sources_digest: str = "s1"
) -> str:
    return cache.base_key(suite=suite, packages=packages, sources_digest=sources_digest)


def test_base_key_ignores_the_order_and_repetition_of_packages() -> None:
    assert _base_key() == _base_key(packages=(*reversed(PACKAGES), PACKAGES[0]))


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"suite": "trixie"}, id="suite"),
        pytest.param({"packages": (*PACKAGES, "python3.11-venv")}, id="package-added"),
        pytest.param({"sources_digest": "s2"}, id="apt-sources"),
    ],
)
def test_base_key_changes_with_each_input(changes: dict[str, Any]) -> None:
    assert _base_key(**changes) != _base_key()


def test_base_key_changes_with_the_recipe(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _base_key()
    monkeypatch.setattr(cache, "BASE_RECIPE", cache.BASE_RECIPE + "-next")
    assert _base_key() != before


def test_deps_key_follows_the_lock_and_the_debian_layer() -> None:
    key = cache.deps_key(lock_digest="l1", base_diff_id="b1")
    assert key == cache.deps_key(lock_digest="l1", base_diff_id="b1")
    assert key != cache.deps_key(lock_digest="l2", base_diff_id="b1")
    assert key != cache.deps_key(lock_digest="l1", base_diff_id="b2")
    assert key != cache.app_key(wheel_digest="l1", base_diff_id="b1")


def test_file_digest_follows_names_and_bytes_but_not_directories(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "uv.lock").write_text("lock")
    (tmp_path / "b" / "uv.lock").write_text("lock")
    (tmp_path / "b" / "other.lock").write_text("lock")
    same = cache.digest_files([tmp_path / "a" / "uv.lock"])
    assert same == cache.digest_files([tmp_path / "b" / "uv.lock"])
    assert same != cache.digest_files([tmp_path / "b" / "other.lock"])
    (tmp_path / "b" / "uv.lock").write_text("lock2")
    assert same != cache.digest_files([tmp_path / "b" / "uv.lock"])


def _layer_in(directory: Path) -> layer.Layer:
    (directory / "tree").mkdir()
    (directory / "tree" / "f").write_text("f")
    return layer.write(directory / "tree", [PurePosixPath("f")], directory / "layer.tar.gz")


def test_an_entry_is_found_only_once_stored(tmp_path: Path) -> None:
    entries = cache.Cache(root=tmp_path)
    assert entries.load("deps", "k") is None
    with entries.locked("deps", "k") as directory:
        built = _layer_in(directory)
        assert entries.load("deps", "k") is None, "a layer file without layer.json is not an entry"
        entries.store("deps", "k", built)
    assert entries.load("deps", "k") == built


def test_storing_a_layer_from_elsewhere_is_refused(tmp_path: Path) -> None:
    entries = cache.Cache(root=tmp_path / "cache")
    (tmp_path / "other").mkdir()
    with pytest.raises(ValueError, match="not inside the cache entry"):
        entries.store("deps", "k", _layer_in(tmp_path / "other"))


def test_prune_keeps_the_newest_entries(tmp_path: Path) -> None:
    entries = cache.Cache(root=tmp_path)
    for age, key in enumerate(["new", "mid", "old"]):
        with entries.locked("app", key) as directory:
            entries.store("app", key, _layer_in(directory))
        stamp = 1_700_000_000 - age * 100
        os.utime(directory / "layer.json", (stamp, stamp))
    entries.prune("app", keep=2)
    assert [key for key in ("new", "mid", "old") if entries.load("app", key)] == ["new", "mid"]
    assert not (tmp_path / "app-old").exists()
