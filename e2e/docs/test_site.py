"""The documentation site builds strictly and renders in a real browser: headless Chromium loads the
landing page and a generated API reference page over loopback HTTP, with every other host
unresolvable (CI's browser has no internet), and the pages are neither empty nor blank.

No control plane: these tests request none of its fixtures."""

from __future__ import annotations

import functools
import html
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from e2e.docs.png import blank_reason

REPO = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 180.0
BROWSER_TIMEOUT = 60.0
RENDER_DEADLINE = 90.0
WINDOW = (1280, 900)
# Resources that a page loads (not links it offers): none may come from another host.
_EXTERNAL_LOAD = re.compile(
    r"<(?:script|img|iframe|source)\b[^>]*\bsrc=[\"']?(?:https?:)?//"
    r"|<link\b(?=[^>]*\brel=[\"']?(?:stylesheet|preconnect|preload|icon|modulepreload))[^>]*\bhref=[\"']?(?:https?:)?//"
    r"|@import\s+(?:url\()?[\"']?(?:https?:)?//",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Page:
    path: str
    title: str
    texts: tuple[str, ...]


# No #fragment in these paths: Chromium's headless --screenshot of a page scrolled to an anchor
# comes out blank, whatever the page.
LANDING = Page("", "OLM v1 in Python", ("Where to start", "operator-controller", "olm_runtime"))
REFERENCE = Page(
    "reference/clusterextensions.html",
    "ClusterExtension fields - OLM v1 in Python",
    ('id="spec-source-catalog"', "packageName", "Printer columns"),
)


def _chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.fail(
            "chromium is not installed: install the Debian package `chromium` "
            "(`apt-get install chromium fonts-dejavu-core`, or hack/install-deps.sh)"
        )
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the working tree, strictly, as `make docs` builds it."""
    directory = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(REPO / "mkdocs.yml"),
            "--site-dir",
            str(directory),
        ],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr}"
    return directory


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    # Bound before the thread starts, so the first request cannot race the listener.
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, name="docs-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _browse(url: str, profile: Path, *action: str) -> subprocess.CompletedProcess[str]:
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        # Only loopback resolves, as on a machine without internet: a page that needs a CDN shows it.
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        # Lets the theme's scripts run before the DOM is dumped or the screen captured.
        "--virtual-time-budget=5000",
        *action,
        url,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT, check=False)
    assert result.returncode == 0, f"chromium failed on {url}:\n{result.stderr[-4000:]}"
    return result


@pytest.mark.parametrize(
    "page", [pytest.param(LANDING, id="landing"), pytest.param(REFERENCE, id="reference")]
)
def test_page_renders_its_content(page: Page, base_url: str, tmp_path: Path) -> None:
    url = base_url + page.path
    dom = _browse(url, tmp_path / "profile-dom", "--dump-dom").stdout
    assert f"<title>{html.escape(page.title, quote=False)}</title>" in dom
    for text in page.texts:
        assert text in dom, f"{url}: {text!r} not in the rendered DOM"

    screenshot = tmp_path / "page.png"
    deadline = time.monotonic() + RENDER_DEADLINE
    while True:
        screenshot.unlink(missing_ok=True)
        _browse(url, tmp_path / "profile-shot", f"--screenshot={screenshot}")
        assert screenshot.is_file(), f"chromium wrote no screenshot of {url}"
        reason = blank_reason(screenshot.read_bytes(), WINDOW, max_background_share=0.99)
        if reason is None:
            return
        # Each capture takes seconds of its own; trying again until the deadline needs no sleep.
        assert time.monotonic() < deadline, f"{url} renders blank: {reason}"


def test_no_page_loads_anything_from_another_host(site: Path) -> None:
    offenders = [
        f"{path.relative_to(site)}: {match.group(0)}"
        for path in sorted(site.rglob("*"))
        if path.suffix in {".html", ".css"}
        for match in _EXTERNAL_LOAD.finditer(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert offenders == []


def test_the_reference_pages_link_to_their_sections(site: Path) -> None:
    page = (site / "reference" / "clusterobjectsets.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    links = set(re.findall(r'href="#([^"]+)"', page))
    assert {"spec-phases-objects-ref", "status-conditions"} <= ids
    assert links - ids == set()
