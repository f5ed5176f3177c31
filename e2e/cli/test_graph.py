"""`olmctl package graph` as a subprocess against the real control plane, a real catalogd process and
a real registry, on a catalog holding the real sailoperator package (10 channels, skipRange on every
entry) and the demo package with deprecations; the SVG it prints is opened in headless Chromium
(Debian's `chromium`), which must render it (not blank) with the versions in its DOM.

The ClusterExtension whose installed bundle `--extension` marks gets its `status.install` written
through the real API server's status subresource, which is all the command reads of it. It is
scoped away from any operator-controller the session runs (`testing_seams.SCOPE_LABEL`), so none
reconciles it and rewrites that status."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from e2e.catalogd.conftest import Env
from e2e.cli.test_olmctl import write_demo_catalog
from e2e.docs.png import blank_reason
from olm.api.kinds import CLUSTER_EXTENSION
from olm.cli.main import EXIT_FAILED, EXIT_OK
from olm.process import testing_seams
from olm_testkit.catalogs import cluster_catalog, push_catalog
from olm_testkit.chromium import screenshot, size_of
from olm_testkit.images.realdata import COMMUNITY_CATALOG_DIR as CATALOG
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl

SAIL = "sailoperator"


def _rendered(svg: str, directory: Path) -> str:
    """Open `svg` in Chromium: check the screenshot is not blank and return the rendered DOM."""
    directory.mkdir(parents=True, exist_ok=True)
    svg_file, png_file = directory / "graph.svg", directory / "graph.png"
    svg_file.write_text(svg)
    size = size_of(svg)
    screenshot(svg_file, png_file, size)
    reason = blank_reason(png_file.read_bytes(), size, max_background_share=0.97)
    assert reason is None, f"the graph renders blank: {reason}"
    return screenshot(svg_file, png_file, size, dump_dom=True)


async def test_olmctl_draws_upgrade_graphs_that_a_browser_renders(env: Env, tmp_path: Path) -> None:
    olmctl = Olmctl(env.control_plane.kubeconfig, env.control_plane.ca_file)
    catalog = unique("graph")
    directory = tmp_path / "catalog"
    _, green = write_demo_catalog(directory, unique("graph"))
    (directory / SAIL).mkdir()
    shutil.copyfile(CATALOG / SAIL / "catalog.yaml", directory / SAIL / "catalog.yaml")
    image = f"{env.registry.host}/{unique('e2e/graph')}:v1"
    push_catalog(env.pusher, directory, image)
    await env.catalogs.create(cluster_catalog(catalog, image))
    await env.catalogs.wait_serving(catalog)

    drawn = await olmctl("package", "graph", SAIL, "--catalog", catalog)
    assert (drawn.code, drawn.err) == (EXIT_OK, "")
    ET.fromstring(drawn.out)  # well-formed
    dom = _rendered(drawn.out, tmp_path / "sail")
    for text in (
        "sailoperator: upgrade graph, 10 channels",
        "1.31.0-nightly-2026-08-22",
        "1.25.0",
        "stable-1.30",
    ):
        assert text in dom, f"{text!r} not in the rendered DOM"

    dot = await olmctl(
        "package", "graph", SAIL, "--catalog", catalog, "--channel", "stable-1.26", "-o", "dot"
    )
    assert dot.code == EXIT_OK, dot.err
    assert dot.out.startswith(f'digraph "{SAIL}" {{\n')
    assert '"sailoperator.v1.25.2" -> "sailoperator.v1.26.0" [style="solid"' in dot.out
    assert dot.out.count('style="dotted"') == 10  # skipRange: 1 + 2 + 3 + 4 older versions

    extension = unique("graph")
    await env.kube.create(
        {
            "apiVersion": CLUSTER_EXTENSION.api_version,
            "kind": CLUSTER_EXTENSION.kind,
            "metadata": {"name": extension, "labels": {testing_seams.SCOPE_LABEL: "no-controller"}},
            "spec": {
                "namespace": "default",
                "serviceAccount": {"name": "installer"},
                "source": {"sourceType": "Catalog", "catalog": {"packageName": green}},
            },
        }
    )
    try:
        await env.kube.patch_status(
            CLUSTER_EXTENSION,
            extension,
            {"status": {"install": {"bundle": {"name": f"{green}.v0.1.0", "version": "0.1.0"}}}},
        )
        marked = await olmctl("package", "graph", green, "--catalog", catalog, "--extension", extension)
        assert (marked.code, marked.err) == (EXIT_OK, "")
        dom = _rendered(marked.out, tmp_path / "green")
        assert "installed, deprecated</tspan>" in dom  # the label of 0.1.0
        assert "(deprecated)</text>" in dom  # the header of the deprecated channel `candidate`

        wrong = await olmctl("package", "graph", SAIL, "--catalog", catalog, "--extension", extension)
        assert (wrong.code, wrong.out) == (EXIT_FAILED, "")
        assert (
            wrong.err == f"error: clusterextension {extension!r} installs package {green!r}, not {SAIL!r}\n"
        )
    finally:
        await env.kube.delete(CLUSTER_EXTENSION, extension)

    no_channel = await olmctl("package", "graph", green, "--catalog", catalog, "--channel", "fast")
    assert (no_channel.code, no_channel.out) == (EXIT_FAILED, "")
    assert no_channel.err == (
        f"error: catalog {catalog!r} has no channel 'fast' of {green!r} (channels: candidate, stable)\n"
    )
    absent = await olmctl("package", "graph", green, "--catalog", catalog, "--extension", "no-such-extension")
    assert (absent.code, absent.err) == (
        EXIT_FAILED,
        'error: clusterextension "no-such-extension" not found\n',
    )

    twin = unique("graph")
    await env.catalogs.create(cluster_catalog(twin, image))
    await env.catalogs.wait_serving(twin)
    ambiguous = await olmctl("package", "graph", green)
    assert (ambiguous.code, ambiguous.out) == (EXIT_FAILED, "")
    assert ambiguous.err == (
        f"error: package {green!r} is in several catalogs ({', '.join(sorted((catalog, twin)))}); "
        "choose one with --catalog\n"
    )
