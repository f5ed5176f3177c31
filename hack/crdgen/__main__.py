"""Write (or, with --check, verify) the CRDs under manifests/crds/.

uv run python -m hack.crdgen            # regenerate
uv run python -m hack.crdgen --check    # exit 1 if any file is stale, missing or unexpected
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from hack import generated
from olm.api.crdgen.crd import render_all
from olm.api.models import COMPATIBILITY_RESOURCES, RESOURCES

DEFAULT_OUTPUT = Path(__file__).resolve().parents[2] / "manifests" / "crds"
_OWNED_GLOB = "*.yaml"
"""Every file of the folder is generated: OLM's kinds and the v0 kinds it serves."""


def stale_files(expected: Mapping[str, str], directory: Path) -> list[str]:
    """Names of CRD files in `directory` that differ from `expected`, are missing, or are not expected."""
    return generated.stale_files(expected, directory, _OWNED_GLOB)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.crdgen", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the files on disk are not current")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help="default: %(default)s")
    args = parser.parse_args(argv)
    expected = render_all((*RESOURCES, *COMPATIBILITY_RESOURCES))
    target = generated.Target(
        directory=args.output_dir,
        owned_glob=_OWNED_GLOB,
        what="CRDs",
        shown_as=str(args.output_dir),
        source="olm/api",
        module="hack.crdgen",
    )
    return generated.write_or_check(expected, target, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
