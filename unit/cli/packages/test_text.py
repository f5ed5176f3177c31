"""`package show` and `package versions` laid out for people."""

from __future__ import annotations

from olm.cli.catalogs.content import parse_catalog
from olm.cli.packages.summary import summarize, versions_of
from olm.cli.packages.text import package_text, versions_table
from unit.cli.catalog_data import BODY


def test_package_text_shows_every_section() -> None:
    text = package_text(summarize("demo", parse_catalog("demo", BODY)["kube-green"]))
    assert text == (
        "Package:         kube-green\n"
        "Catalog:         demo\n"
        "Display name:    Kube Green\n"
        "Description:     Saves CO2 by putting idle workloads to sleep.\n"
        "Default channel: alpha\n"
        "Latest version:  0.7.1\n"
        "Install modes:   OwnNamespace, SingleNamespace, AllNamespaces\n"
        "Provided APIs:   SleepInfo.kube-green.com/v1alpha1\n"
        "Channels:\n"
        "  CHANNEL            VERSIONS\n"
        "  alpha              0.7.1, 0.6.0, 0.5.0 (deprecated)\n"
        "  old (deprecated)   0.5.0 (deprecated)\n"
    )


def test_versions_table() -> None:
    rows = versions_of(parse_catalog("demo", BODY)["kube-green"], "alpha") or []
    text = versions_table([("demo", r) for r in rows])
    assert text.splitlines()[0].split() == [
        "CATALOG",
        "VERSION",
        "BUNDLE",
        "REPLACES",
        "SKIP",
        "RANGE",
        "DEPRECATED",
    ]
    assert text.splitlines()[1].split() == [
        "demo",
        "0.7.1",
        "kube-green.v0.7.1",
        "kube-green.v0.6.0",
        "<0.7.0",
    ]
    assert text.splitlines()[3].split() == ["demo", "0.5.0", "kube-green.v0.5.0", "yes"]
