"""Write (or, with --check, verify) the CRDs under manifests/crds/.

uv run python -m hack.crdgen            # regenerate
uv run python -m hack.crdgen --check    # exit 1 if any file is stale, missing or unexpected
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from hack.crdgen.crd import render_all
from olm.api import RESOURCES, names

DEFAULT_OUTPUT = Path(__file__).resolve().parents[2] / "manifests" / "crds"
_OWNED_GLOB = f"{names.GROUP}_*.yaml"


def stale_files(expected: Mapping[str, str], directory: Path) -> list[str]:
    """Names of files in `directory` that differ from `expected`, are missing, or are not expected."""
    stale = [
        name
        for name, content in sorted(expected.items())
        if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != content
    ]
    unexpected = sorted(p.name for p in directory.glob(_OWNED_GLOB) if p.name not in expected)
    return stale + unexpected


def write(expected: Mapping[str, str], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for stray in directory.glob(_OWNED_GLOB):
        if stray.name not in expected:
            stray.unlink()
    for name, content in expected.items():
        (directory / name).write_text(content, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.crdgen", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the files on disk are not current")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help="default: %(default)s")
    args = parser.parse_args(argv)
    expected = render_all(RESOURCES)
    if args.check:
        stale = stale_files(expected, args.output_dir)
        if stale:
            print(
                f"CRDs in {args.output_dir} are out of date with olm/api: {', '.join(stale)}.\n"
                "Run `uv run python -m hack.crdgen` (or `make manifests`) and commit the result.",
                file=sys.stderr,
            )
            return 1
        print(f"CRDs in {args.output_dir} are up to date.")
        return 0
    write(expected, args.output_dir)
    print(f"Wrote {len(expected)} CRDs to {args.output_dir}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
