"""The SVG drawing of upgrade graphs (`olm.cli.packages.graphsvg`): well-formed, labelled with real `<text>`,
skipRanges drawn once per entry, deprecations and the installed bundle marked."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from olm.cli.packages import graphsvg, upgradegraph
from olm.cli.packages.upgradegraph import UpgradeGraph
from olm_testkit.chromium import size_of
from olm_testkit.images.realdata import COMMUNITY_CATALOG_DIR as CATALOG
from olm_testkit.images.realdata import read_package
from unit.cli.graph_data import mypackage

pytestmark = pytest.mark.skipif(not CATALOG.is_dir(), reason="shared/realdata is not beside the repo")

SVG = "{http://www.w3.org/2000/svg}"


def _graph(package: str, channel: str | None = None) -> UpgradeGraph:
    return upgradegraph.build(read_package(CATALOG, package), "community", channel=channel)


def _texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


@pytest.mark.parametrize(
    ("package", "channel"),
    [
        pytest.param("infinispan", None, id="infinispan-49-bundles-4-channels"),
        pytest.param("sailoperator", None, id="sailoperator-10-channels"),
        pytest.param("patterns-operator", None, id="patterns-operator-80-bundles"),
        pytest.param("cat-facts-operator", "stable", id="cat-facts-one-channel"),
    ],
)
def test_every_version_and_channel_is_a_text_element_of_a_well_formed_document(
    package: str, channel: str | None
) -> None:
    graph = _graph(package, channel)
    svg = graphsvg.render(graph)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    texts = _texts(root)
    labels = {t.split()[0] for t in texts if t}
    for node in graph.nodes:
        assert node.version in labels, node.bundle
    for name in graph.channels:
        assert name in texts
    assert texts[0].startswith(f"{package}: upgrade graph")
    width, height = size_of(svg)
    assert height > len(graph.nodes) * graphsvg.ROW
    assert width >= 640
    assert svg == graphsvg.render(graph), "the same graph draws the same document"


def test_skip_ranges_are_drawn_once_per_entry_not_once_per_edge() -> None:
    graph = _graph("sailoperator", "stable")
    root = ET.fromstring(graphsvg.render(graph))
    brackets = [g for g in root.iter(f"{SVG}g") if "skipRange" in "".join(g.findtext(f"{SVG}title") or "")]
    assert len(brackets) == len(graph.skip_ranges) == 19
    assert len(graph.edges_of(upgradegraph.EdgeKind.SKIP_RANGE)) == 190
    titles = {t.text for t in root.iter(f"{SVG}title")}
    assert "sailoperator.v1.30.3 skipRange >=1.0.0 <1.30.3" in titles
    assert "sailoperator.v1.30.3 replaces sailoperator.v1.30.0" in titles


def test_deprecations_and_the_installed_bundle_are_marked() -> None:
    graph = upgradegraph.build(mypackage(), "grokspawn", installed="mypackage.v0.2.0")
    root = ET.fromstring(graphsvg.render(graph))
    texts = _texts(root)
    assert any(t.startswith("package deprecated: package mypackage is end of life.") for t in texts)
    assert "(deprecated)" in texts  # the header of channel `early`
    labels = {"".join(t.itertext()): t for t in root.iter(f"{SVG}text")}
    assert labels["0.1.0deprecated"].get("fill") == graphsvg.DEPRECATED
    assert labels["0.2.0installed"].get("font-weight") == "bold"
    rows = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == graphsvg.INSTALLED]
    assert len(rows) == 2  # the installed row and the legend's sample
    rings = [c for c in root.iter(f"{SVG}circle") if c.get("stroke") == graphsvg.DEPRECATED]
    assert len(rings) == 3  # 0.1.0 in `stable` and in `early`, and the legend's sample
    assert "mypackage.v0.2.0: skipRange 'not a range' does not parse and allows no upgrade" in texts


def test_references_to_bundles_the_catalog_lacks_are_listed_under_the_graph() -> None:
    texts = _texts(ET.fromstring(graphsvg.render(_graph("infinispan", "2.2.x"))))
    assert "infinispan-operator.v2.1.5: not in the catalog (replaced by 2.2.0 in 2.2.x)" in texts
    every_channel = _texts(ET.fromstring(graphsvg.render(_graph("infinispan"))))
    assert (
        "infinispan-operator.v1.1.2: not in the catalog (skipped by 2.3.8 in stable, 2.3.x, 2.4.x)"
        in every_channel
    )
    many = _texts(ET.fromstring(graphsvg.render(_graph("opendatahub-operator", "fast"))))
    assert "opendatahub-operator.v2.9.0: not in the catalog (skipped by 22 bundles in fast)" in many
