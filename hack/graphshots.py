"""The upgrade-graph screenshots of the docs, drawn from real catalog files and photographed by
headless Chromium (Debian's `chromium` package):

    uv run --frozen python -m hack.graphshots

writes `docs/cli/images/<package>.svg`'s picture as `docs/cli/images/graph-<package>.png` for each
package of `SHOTS`. The SVG is the one `olmctl package graph -o svg` prints for the same content, so
the pictures show what users get. The e2e test of `package graph` uses `screenshot` too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hack.images import realdata
from olm import fbc
from olm.cli import graphsvg, upgradegraph
from olm.pipeline.catalogs import PackageContent, parse_lines

ROOT = Path(__file__).resolve().parents[1]
CATALOG = realdata.REALDATA / realdata.COMMUNITY_CATALOG
CATALOG_NAME = "community-operators"
IMAGES = ROOT / "docs" / "cli" / "images"
SHOTS: tuple[tuple[str, str | None, str], ...] = (
    ("sailoperator", None, ""),
    ("infinispan", None, "infinispan-operator.v2.4.10"),
)
"""(package, channel or None for all channels, bundle to mark installed as `--extension` does)."""
BROWSER_TIMEOUT = 60.0

_SIZE = re.compile(r'<svg [^>]*width="(\d+)" height="(\d+)"')


def read_package(directory: Path, package: str, catalog: str = CATALOG_NAME) -> PackageContent:
    """One package of a catalog directory, parsed as catalogd serves it and the resolver reads it."""
    blobs = [meta.blob for meta in fbc.iter_metas(directory / package)]
    return parse_lines(catalog, package, blobs)


def size_of(svg: str) -> tuple[int, int]:
    found = _SIZE.search(svg)
    if found is None:
        raise ValueError("not an SVG document with a width and height")
    return int(found[1]), int(found[2])


def screenshot(svg_file: Path, png_file: Path, size: tuple[int, int], *, dump_dom: bool = False) -> str:
    """Photograph `svg_file` at `size` into `png_file`; with `dump_dom`, return the DOM Chromium
    rendered instead (Chromium does one or the other per run)."""
    chromium = shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("chromium is not installed: apt-get install chromium fonts-dejavu-core")
    with tempfile.TemporaryDirectory(prefix="graphshot-") as profile:
        action = "--dump-dom" if dump_dom else f"--screenshot={png_file}"
        result = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                f"--user-data-dir={profile}",
                f"--window-size={size[0]},{size[1]}",
                action,
                svg_file.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=BROWSER_TIMEOUT,
            check=False,
        )
    if result.returncode != 0:
        raise RuntimeError(f"chromium failed on {svg_file}:\n{result.stderr[-4000:]}")
    return result.stdout


def main() -> int:
    IMAGES.mkdir(parents=True, exist_ok=True)
    for package, channel, installed in SHOTS:
        graph = upgradegraph.build(
            read_package(CATALOG, package), CATALOG_NAME, channel=channel, installed=installed
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
