"""Write (or, with --check, verify) the API reference pages under docs/reference/.

uv run python -m hack.apidocs            # regenerate from manifests/crds
uv run python -m hack.apidocs --check    # exit 1 if any page is stale, missing or unexpected
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from hack.apidocs.markdown import CRDError, page_name, render_page
from hack.generated import Target, write_or_check

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CRDS = ROOT / "manifests" / "crds"
DEFAULT_OUTPUT = ROOT / "docs" / "reference"
# Hand-written pages about a kind, named by its singular (docs/api/clusterextension.md).
DEFAULT_GUIDES = ROOT / "docs" / "api"
# docs/reference/ holds generated pages only, so every page there is ours to check and replace.
_OWNED_GLOB = "*.md"


def _display(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def load_crds(directory: Path) -> dict[str, Any]:
    """File name -> CRD, for every YAML file in `directory`."""
    crds: dict[str, Any] = {}
    for path in sorted(directory.glob("*.yaml")):
        documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
        if len(documents) != 1:
            raise SystemExit(
                f"{_display(path)}: expected one CustomResourceDefinition, found {len(documents)}"
            )
        crds[path.name] = documents[0]
    return crds


def render_all(crds: Mapping[str, Any], *, crd_dir: Path, output: Path, guides: Path) -> dict[str, str]:
    """Page name -> content for every CRD; the guide link is relative to the output directory."""
    pages: dict[str, str] = {}
    for file_name, crd in crds.items():
        source = _display(crd_dir / file_name)
        try:
            name = page_name(crd)
        except CRDError as error:
            raise SystemExit(f"{source}: {error}") from error
        if name in pages:
            raise SystemExit(f"two CRDs in {_display(crd_dir)} would both be written to {name}")
        names = crd["spec"]["names"]
        guide_path = guides / f"{names.get('singular', names['kind'].lower())}.md"
        guide = Path(os.path.relpath(guide_path, output)).as_posix() if guide_path.is_file() else None
        pages[name] = render_page(crd, source=source, guide=guide)
    return dict(sorted(pages.items()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hack.apidocs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the pages on disk are not current")
    parser.add_argument("--crds", type=Path, default=DEFAULT_CRDS, help="default: %(default)s")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT, help="default: %(default)s")
    parser.add_argument("--guides", type=Path, default=DEFAULT_GUIDES, help="default: %(default)s")
    args = parser.parse_args(argv)
    crd_dir, output = args.crds.resolve(), args.output_dir.resolve()
    expected = render_all(load_crds(crd_dir), crd_dir=crd_dir, output=output, guides=args.guides.resolve())
    target = Target(
        directory=output,
        owned_glob=_OWNED_GLOB,
        what="API reference pages",
        shown_as=_display(output),
        source=_display(crd_dir),
        module="hack.apidocs",
    )
    return write_or_check(expected, target, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
