"""The upgrade-graph screenshots of the docs, drawn from real catalog files and photographed by
headless Chromium (Debian's `chromium` package):

    uv run --frozen python -m hack.graphshots

writes `docs/cli/images/<package>.svg`'s picture as `docs/cli/images/graph-<package>.png` for each
package of `SHOTS`. The SVG is the one `olmctl package graph -o svg` prints for the same content, so
the pictures show what users get. The e2e test of `package graph` uses `screenshot` too.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from olm.cli.packages import graphsvg, upgradegraph
from olm_testkit.chromium import screenshot, size_of
from olm_testkit.images import realdata

ROOT = Path(__file__).resolve().parents[1]
CATALOG = realdata.COMMUNITY_CATALOG_DIR
CATALOG_NAME = "community-operators"
IMAGES = ROOT / "docs" / "cli" / "images"
SHOTS: tuple[tuple[str, str | None, str], ...] = (
    ("sailoperator", None, ""),
    ("infinispan", None, "infinispan-operator.v2.4.10"),
)
"""(package, channel or None for all channels, bundle to mark installed as `--extension` does)."""


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    for package, channel, installed in SHOTS:
        graph = upgradegraph.build(
            realdata.read_package(CATALOG, package, CATALOG_NAME),
            CATALOG_NAME,
            channel=channel,
            installed=installed,
        )
        svg = graphsvg.render(graph)
        with tempfile.TemporaryDirectory(prefix="graphshot-") as scratch:
            svg_file = Path(scratch) / f"{package}.svg"
            svg_file.write_text(svg)
            png_file = IMAGES / f"graph-{package}.png"
            screenshot(svg_file, png_file, size_of(svg))
        print(
            f"{png_file.relative_to(ROOT)}: {png_file.stat().st_size // 1024} KiB, {len(graph.nodes)} bundles"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
