"""Write generated files into a folder, or with --check, report which of them are not current.

The generators under hack/ (crdgen, apidocs) each own a folder's files matching a glob: a file there
that the generator no longer renders is stale too, so writing removes it and checking names it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Target:
    """A folder a generator owns, and the words its messages use for it."""

    directory: Path
    # Which files in `directory` are the generator's: only these are checked or removed.
    owned_glob: str
    # Plural noun for the files, e.g. "CRDs".
    what: str
    # How the folder and the input it is generated from are named in messages.
    shown_as: str
    source: str
    # The module that regenerates the files, named in the hint on a failed check.
    module: str


def stale_files(expected: Mapping[str, str], directory: Path, owned_glob: str) -> list[str]:
    """Names of files in `directory` that differ from `expected`, are missing, or are not expected."""
    stale = [
        name
        for name, content in sorted(expected.items())
        if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != content
    ]
    unexpected = sorted(p.name for p in directory.glob(owned_glob) if p.name not in expected)
    return stale + unexpected


def write_files(expected: Mapping[str, str], directory: Path, owned_glob: str) -> None:
    """Make `directory` hold exactly `expected` among the files matching `owned_glob`."""
    directory.mkdir(parents=True, exist_ok=True)
    for stray in directory.glob(owned_glob):
        if stray.name not in expected:
            stray.unlink()
    for name, content in expected.items():
        (directory / name).write_text(content, encoding="utf-8")


def write_or_check(expected: Mapping[str, str], target: Target, *, check: bool) -> int:
    """Write `expected` into the target folder, or with `check` only compare; the exit code."""
    if check:
        stale = stale_files(expected, target.directory, target.owned_glob)
        if stale:
            print(
                f"{target.what} in {target.shown_as} are out of date with {target.source}: "
                f"{', '.join(stale)}.\n"
                f"Run `uv run python -m {target.module}` (or `make manifests`) and commit the result.",
                file=sys.stderr,
            )
            return 1
        print(f"{target.what} in {target.shown_as} are up to date.")
        return 0
    write_files(expected, target.directory, target.owned_glob)
    print(f"Wrote {len(expected)} {target.what} to {target.shown_as}.")
    return 0
