"""Headless Chromium (Debian's `chromium` package) photographing SVG documents: what the upgrade-graph
test checks a browser renders, and what the docs' screenshots are made with (`python -m hack.graphshots`)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

BROWSER_TIMEOUT = 60.0

_SIZE = re.compile(r'<svg [^>]*width="(\d+)" height="(\d+)"')


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
