"""The upgrade graph model (`olm.cli.packages.upgradegraph`) and its dot rendering, on real catalog files."""

from __future__ import annotations

from collections import Counter

import pytest

from olm.cli.packages import graphdot, upgradegraph
from olm.cli.packages.upgradegraph import EdgeKind, UpgradeGraph
from olm_testkit.images.realdata import COMMUNITY_CATALOG_DIR as CATALOG
from olm_testkit.images.realdata import read_package
from unit.cli.graph_data import mypackage

pytestmark = pytest.mark.skipif(not CATALOG.is_dir(), reason="shared/realdata is not beside the repo")


def _graph(package: str, channel: str | None = None, installed: str = "") -> UpgradeGraph:
    return upgradegraph.build(
        read_package(CATALOG, package), "community", channel=channel, installed=installed
    )


def _kinds(graph: UpgradeGraph) -> Counter[str]:
    return Counter(e.kind.value for e in graph.edges)


def test_infinispan_every_channel_has_its_bundles_ordered_and_its_edges_typed() -> None:
    graph = _graph("infinispan")
    assert graph.channels == ("stable", "2.2.x", "2.3.x", "2.4.x")  # the default channel first
    assert len(graph.nodes) == 49
    assert graph.nodes[0].version == "2.5.14"
    assert graph.nodes[-1].version == "2.2.0"
    assert _kinds(graph) == {"replaces": 58, "skips": 24, "skipRange": 97}
    assert {(m.source, m.kind, m.channel) for m in graph.missing} == {
        ("infinispan-operator.v1.1.2", EdgeKind.SKIPS, "stable"),
        ("infinispan-operator.v1.1.2", EdgeKind.SKIPS, "2.3.x"),
        ("infinispan-operator.v1.1.2", EdgeKind.SKIPS, "2.4.x"),
        ("infinispan-operator.v2.1.5", EdgeKind.REPLACES, "2.2.x"),
    }
    node = graph.node("infinispan-operator.v2.4.0")
    assert node is not None
    assert node.channels == ("stable", "2.4.x")


def test_skip_range_edges_use_the_resolvers_range_semantics() -> None:
    graph = _graph("infinispan", channel="stable")
    assert _kinds(graph) == {"replaces": 34, "skips": 8, "skipRange": 92}
    first = next(r for r in graph.skip_ranges if r.target == "infinispan-operator.v2.5.7")
    assert first.text == ">=2.4.18 <2.5.7"
    assert [b.removeprefix("infinispan-operator.v") for b in first.covers] == [
        "2.5.6",
        "2.5.5",
        "2.5.4",
        "2.5.3",
        "2.5.2",
        "2.5.1",
        "2.5.0",
        "2.4.18",
    ]
    # blang's x-range: `>=2.1.x <2.2.1` covers 2.2.0 and nothing of 2.2.x above it
    old = _graph("infinispan", channel="2.2.x")
    ranges = {r.target: r.covers for r in old.skip_ranges}
    assert ranges["infinispan-operator.v2.2.1"] == ("infinispan-operator.v2.2.0",)


def test_sailoperator_stable_has_one_skip_range_per_entry_covering_all_older_versions() -> None:
    graph = _graph("sailoperator", channel="stable")
    assert len(graph.nodes) == 20
    assert _kinds(graph) == {"replaces": 19, "skipRange": 190}  # 1 + 2 + ... + 19
    assert len(graph.skip_ranges) == 19
    order = [n.bundle for n in graph.nodes]
    for skip_range in graph.skip_ranges:
        assert list(skip_range.covers) == order[order.index(skip_range.target) + 1 :], skip_range.text


def test_a_bundle_of_another_channel_named_by_replaces_is_a_node_outside_the_channel() -> None:
    graph = _graph("sailoperator", channel="stable-1.26")
    outside = [n for n in graph.nodes if not n.channels]
    assert [n.bundle for n in outside] == ["sailoperator.v1.25.2"]
    assert any(
        e.source == "sailoperator.v1.25.2"
        and e.kind is EdgeKind.REPLACES
        and e.target == "sailoperator.v1.26.0"
        for e in graph.edges
    )


def test_an_unknown_channel_names_the_channels_there_are() -> None:
    with pytest.raises(
        upgradegraph.NoSuchChannel, match=r"no channel 'fast' of 'kube-green' \(channels: alpha\)"
    ):
        _graph("kube-green", channel="fast")


def test_the_installed_bundle_is_marked() -> None:
    graph = _graph("kube-green", installed="kube-green.v0.5.0")
    assert [n.bundle for n in graph.nodes if n.installed] == ["kube-green.v0.5.0"]
    assert graph.installed == "kube-green.v0.5.0"


def _mypackage() -> UpgradeGraph:
    return upgradegraph.build(mypackage(), "grokspawn")


def test_package_channel_and_bundle_deprecations_are_marked() -> None:
    graph = _mypackage()
    assert graph.deprecated.startswith("package mypackage is end of life.")
    assert list(graph.deprecated_channels) == ["early"]
    deprecated = {n.bundle: n.deprecated for n in graph.nodes if n.deprecated}
    assert list(deprecated) == ["mypackage.v0.1.0"]
    assert deprecated["mypackage.v0.1.0"].startswith("mypackage.v0.1.0 is deprecated.")


def test_a_malformed_skip_range_grants_nothing_and_versions_that_are_not_semver_come_last() -> None:
    graph = _mypackage()
    assert [n.bundle for n in graph.nodes] == [
        "mypackage.v0.3.0",
        "mypackage.v0.2.0",
        "mypackage.v0.1.0",
        "mypackage.vlatest",
    ]
    broken = next(r for r in graph.skip_ranges if r.target == "mypackage.v0.2.0")
    assert (broken.valid, broken.covers) == (False, ())
    assert [(e.source, e.target) for e in graph.edges_of(EdgeKind.SKIP_RANGE)] == [
        ("mypackage.v0.2.0", "mypackage.v0.3.0"),
        ("mypackage.v0.1.0", "mypackage.v0.3.0"),
    ]


def test_dot_has_one_styled_edge_per_model_edge() -> None:
    graph = _graph("cat-facts-operator")
    dot = graphdot.render(graph)
    assert dot.startswith('digraph "cat-facts-operator" {\n')
    edge_lines = [line for line in dot.splitlines() if " -> " in line]
    assert len(edge_lines) == len(graph.edges)
    styles = Counter(line.split('style="')[1].split('"')[0] for line in edge_lines)
    assert styles == {
        "solid": len(graph.edges_of(EdgeKind.REPLACES)),
        "dashed": len(graph.edges_of(EdgeKind.SKIPS)),
    }
    for node in graph.nodes:
        assert f'"{node.bundle}" [label="{node.version}"' in dot


def test_dot_marks_deprecated_and_installed_bundles() -> None:
    graph = upgradegraph.build(mypackage(), "grokspawn", channel="stable", installed="mypackage.v0.2.0")
    dot = graphdot.render(graph)
    assert '"mypackage.v0.1.0" [label="0.1.0\\n(deprecated)"' in dot
    assert '"mypackage.v0.2.0" [label="0.2.0\\n(installed)"' in dot
    assert "(package deprecated)" in dot
