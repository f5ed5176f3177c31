"""Package summaries, channel versions and search matching, from a served catalog's metas."""

from __future__ import annotations

import pytest

from olm.cli.catalogs.content import parse_catalog
from olm.cli.packages.summary import matches, summarize, versions_of
from olm.pipeline.catalogs import MalformedCatalog
from unit.cli.catalog_data import BODY


def test_parse_catalog_groups_metas_by_package_and_ignores_other_schemas() -> None:
    packages = parse_catalog("demo", BODY)
    assert sorted(packages) == ["cat-facts", "kube-green"]
    green = packages["kube-green"]
    assert green.package is not None
    assert green.package.default_channel == "alpha"
    assert [c.name for c in green.channels] == ["alpha", "old"]
    assert len(green.bundles) == 3
    assert green.deprecations is not None


def test_parse_catalog_names_the_catalog_when_a_line_is_broken() -> None:
    with pytest.raises(MalformedCatalog, match="demo"):
        parse_catalog("demo", b'{"schema": "olm.package", "name": "x"}\n{"schema": "olm.bundle", ')


def test_a_malformed_package_is_left_out_and_the_others_read() -> None:
    # catalogd serves such a catalog, as upstream's does; the resolver skips it for that package only.
    body = BODY + b'{"schema": "olm.bundle", "package": "broken", "name": "b", "properties": "x"}\n'
    packages = parse_catalog("demo", body)
    assert sorted(packages) == ["cat-facts", "kube-green"]
    assert list(packages.malformed) == ["broken"]
    assert "catalog 'demo' served malformed content" in packages.malformed["broken"].message
    assert "properties: Input should be a valid array" in packages.malformed["broken"].message


def test_summary_reads_the_latest_bundles_csv_metadata() -> None:
    summary = summarize("demo", parse_catalog("demo", BODY)["kube-green"])
    assert summary.latest_version == "0.7.1"
    assert summary.latest_bundle == "kube-green.v0.7.1"
    assert summary.display_name == "Kube Green"
    assert summary.keywords == ("sustainability", "Energy")
    assert summary.default_channel == "alpha"
    assert summary.install_modes == (
        ("OwnNamespace", True),
        ("SingleNamespace", True),
        ("MultiNamespace", False),
        ("AllNamespaces", True),
    )
    assert summary.provided_apis == (("kube-green.com", "v1alpha1", "SleepInfo"),)
    channels = {c.name: c for c in summary.channels}
    assert channels["alpha"].versions == ("0.7.1", "0.6.0", "0.5.0")
    assert channels["alpha"].deprecated_versions == ("0.5.0",)
    assert channels["old"].deprecated == "use alpha"
    assert summary.deprecated == ""
    assert summary.to_dict()["deprecatedBundles"] == {"kube-green.v0.5.0": "too old"}


def test_summary_reads_a_whole_csv_from_bundle_object_properties() -> None:
    summary = summarize("demo", parse_catalog("demo", BODY)["cat-facts"])
    assert summary.display_name == "Cat Facts"
    assert summary.description == "Facts about cats."
    assert summary.keywords == ("feline",)
    assert summary.install_modes == ()


def test_summary_falls_back_to_the_package_description() -> None:
    body = b'{"schema":"olm.package","name":"p","description":"from the package"}\n'
    summary = summarize("demo", parse_catalog("demo", body)["p"])
    assert summary.description == "from the package"
    assert summary.latest_version == ""


@pytest.mark.parametrize(
    ("text", "package", "expected"),
    [
        ("GREEN", "kube-green", True),  # name, any case
        ("kube green", "kube-green", True),  # display name
        ("co2", "kube-green", True),  # description
        ("energy", "kube-green", True),  # keyword
        ("feline", "cat-facts", True),
        ("feline", "kube-green", False),
        ("nothing-like-this", "kube-green", False),
    ],
)
def test_search_matches_names_display_names_descriptions_and_keywords(
    text: str, package: str, expected: bool
) -> None:
    summary = summarize("demo", parse_catalog("demo", BODY)[package])
    assert matches(summary, text) is expected


def test_versions_of_a_channel_highest_first_with_graph_fields() -> None:
    content = parse_catalog("demo", BODY)["kube-green"]
    rows = versions_of(content, "alpha")
    assert rows is not None
    assert [(r.version, r.replaces, r.skip_range, r.deprecated) for r in rows] == [
        ("0.7.1", "kube-green.v0.6.0", "<0.7.0", ""),
        ("0.6.0", "kube-green.v0.5.0", "", ""),
        ("0.5.0", "", "", "too old"),
    ]
    assert versions_of(content, "missing") is None
