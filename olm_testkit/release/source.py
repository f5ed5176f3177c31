"""The source a release is built from: the checkout's version (from git), and its files copied and
stamped with that version.

The files are those a build of the checkout would take: tracked and untracked, less what
.gitignore excludes. When they differ from HEAD the build is a snapshot marked dirty (so a developer's
deployed-suite run tests what is on disk, and says so), never a release. Both distributions'
`pyproject.toml` carry the next release's
version; the exported copy's are rewritten to the build's version, which is how the tag reaches the
wheels, the sdists and the image label without a build-time dependency on git (the Containerfile's
build context, an unpacked sdist and a tarball have no `.git`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

from olm_testkit.release import version as versions

__all__ = [
    "PYPROJECTS",
    "SourceError",
    "changed",
    "checked_in_version",
    "export",
    "git",
    "read_build",
    "stamp",
]

PYPROJECTS = ("pyproject.toml", "runtime/pyproject.toml")
"""olm-py's and olm-runtime's: the two distributions, released together under one version."""
_VERSION_LINE = re.compile(r'^version = "([^"]*)"$', re.MULTILINE)


class SourceError(RuntimeError):
    """git failed, or the checkout breaks the version scheme."""


def git(project_dir: Path, *args: str) -> str:
    """The output of `git -C project_dir args...`; `SourceError` with git's message when it fails."""
    result = subprocess.run(
        ["git", "-C", str(project_dir), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SourceError(f"git {' '.join(args)}: {result.stderr.strip() or f'exit {result.returncode}'}")
    return result.stdout


def checked_in_version(tree: Path) -> versions.SemVer:
    """The version both pyproject.toml files carry; they must agree."""
    found = {name: str(tomllib.loads((tree / name).read_text())["project"]["version"]) for name in PYPROJECTS}
    if len(set(found.values())) != 1:
        listed = ", ".join(f"{name}: {value}" for name, value in found.items())
        raise SourceError(f"the two distributions' versions differ ({listed}): they are released together")
    return versions.parse_checked_in(next(iter(found.values())))


def read_build(project_dir: Path) -> versions.Build:
    """The build the checkout at `project_dir` makes (see `olm_testkit.release.version`)."""
    commit = git(project_dir, "rev-parse", "HEAD").strip()
    at_commit = git(project_dir, "tag", "--points-at", "HEAD").split()
    reachable = [
        tag for tag in git(project_dir, "tag", "--merged", "HEAD").split() if versions.parse_tag(tag)
    ]
    distance = {"": int(git(project_dir, "rev-list", "--count", "HEAD"))}
    for tag in reachable:
        distance[tag] = int(git(project_dir, "rev-list", "--count", f"{tag}..HEAD"))
    return versions.describe(
        commit=commit,
        checked_in=checked_in_version(project_dir),
        tags_at_commit=at_commit,
        reachable_tags=reachable,
        distance_from=distance,
        dirty=bool(changed(project_dir)),
    )


def changed(project_dir: Path) -> list[str]:
    """Files that differ from HEAD: modified, added, deleted, or new and not ignored."""
    return [line[3:] for line in git(project_dir, "status", "--porcelain").splitlines()]


def export(project_dir: Path, destination: Path) -> None:
    """Copy the checkout's files (tracked and untracked, less the ignored) into `destination`."""
    listed = git(project_dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    destination.mkdir(parents=True)
    for name in sorted(set(filter(None, listed))):
        origin = project_dir / name
        if not origin.is_file():
            continue  # deleted in the working tree, still in the index
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, target)


def stamp(tree: Path, python_version: str) -> None:
    """Rewrite the `[project]` version of both pyproject.toml files in `tree` to `python_version`."""
    for name in PYPROJECTS:
        path = tree / name
        text = path.read_text()
        stamped, count = _VERSION_LINE.subn(f'version = "{python_version}"', text, count=1)
        if count != 1 or tomllib.loads(stamped)["project"].get("version") != python_version:
            raise SourceError(f'{name} has no top-level `version = "..."` line in [project] to stamp')
        path.write_text(stamped)
