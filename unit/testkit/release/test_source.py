"""A release's source, read from a real git repository: its version from tags, its files as a
build of the checkout would take them, and both pyproject.toml files stamped."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from olm_testkit.release import source


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def pyproject(name: str, version: str) -> str:
    return (
        f'[project]\nname = "{name}"\nversion = "{version}"\ndependencies = []\n\n[tool.x]\nversion = "9"\n'
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "runtime").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(pyproject("olm-py", "0.3.0"))
    (repo / "runtime" / "pyproject.toml").write_text(pyproject("olm-runtime", "0.3.0"))
    (repo / ".gitignore").write_text("/build/\n")
    (repo / "module.py").write_text("first\n")
    git(repo, "init", "--quiet", "--initial-branch=main")
    git(repo, "config", "user.email", "test@example.invalid")
    git(repo, "config", "user.name", "test")
    git(repo, "add", ".")
    git(repo, "commit", "--quiet", "-m", "first")
    return repo


def commit(repo: Path, text: str) -> None:
    (repo / "module.py").write_text(text)
    git(repo, "commit", "--quiet", "-am", text)


def test_an_untagged_history_builds_snapshots_of_the_checked_in_version(repo: Path) -> None:
    commit(repo, "second")
    build = source.read_build(repo)
    assert build.commit == git(repo, "rev-parse", "HEAD")
    assert (build.tagged, build.dirty, build.distance) == (False, False, 2)
    assert build.python == f"0.3.0.dev2+g{build.commit[:12]}"


def test_a_tag_makes_the_release_and_later_commits_count_from_it(repo: Path) -> None:
    git(repo, "tag", "v0.3.0")
    git(repo, "tag", "not-a-release")
    assert source.read_build(repo).python == "0.3.0"
    commit(repo, "second")
    commit(repo, "third")
    build = source.read_build(repo)
    assert build.python == f"0.3.1.dev2+g{build.commit[:12]}"


def test_uncommitted_changes_make_a_dirty_snapshot_even_on_a_tag(repo: Path) -> None:
    git(repo, "tag", "v0.3.0")
    (repo / "new.py").write_text("not added yet\n")
    build = source.read_build(repo)
    assert (build.tagged, build.dirty) == (False, True)
    assert build.python.endswith(".dirty")
    assert source.changed(repo) == ["new.py"]


def test_the_two_distributions_must_agree_on_the_version(repo: Path) -> None:
    (repo / "runtime" / "pyproject.toml").write_text(pyproject("olm-runtime", "0.4.0"))
    with pytest.raises(source.SourceError, match="versions differ"):
        source.read_build(repo)


def test_export_takes_tracked_and_new_files_but_not_ignored_or_deleted_ones(
    repo: Path, tmp_path: Path
) -> None:
    (repo / "build").mkdir()
    (repo / "build" / "artifact").write_text("ignored\n")
    (repo / "new.py").write_text("new\n")
    (repo / "module.py").write_text("changed\n")
    (repo / "gone.py").write_text("gone\n")
    git(repo, "add", "gone.py")
    (repo / "gone.py").unlink()
    out = tmp_path / "out"
    source.export(repo, out)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [".gitignore", "module.py", "new.py", "pyproject.toml", "runtime/pyproject.toml"]
    assert (out / "module.py").read_text() == "changed\n"


def test_stamp_rewrites_only_the_project_version_of_both(repo: Path) -> None:
    source.stamp(repo, "0.3.1.dev2+gabc")
    for name in source.PYPROJECTS:
        parsed = tomllib.loads((repo / name).read_text())
        assert parsed["project"]["version"] == "0.3.1.dev2+gabc"
        assert parsed["tool"]["x"]["version"] == "9"


def test_stamp_refuses_a_pyproject_without_a_static_version(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[project]\nname = "olm-py"\ndynamic = ["version"]\n')
    with pytest.raises(source.SourceError, match="no top-level"):
        source.stamp(repo, "1.0.0")
