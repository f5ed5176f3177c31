"""Table, JSON and YAML output."""

from __future__ import annotations

import orjson
import pytest
import yaml

from olm.cli import render
from olm.cli.content import parse_catalog
from olm.cli.summary import summarize, versions_of
from unit.cli.catalog_data import BODY


def test_table_aligns_columns_kubectl_style() -> None:
    text = render.table(["NAME", "SERVING"], [["demo", "true"], ["a-longer-name", "false"]])
    assert text == "NAME            SERVING\ndemo            true\na-longer-name   false\n"


def test_table_of_no_rows_is_the_header() -> None:
    assert render.table(["A", "B"], []) == "A   B\n"


@pytest.mark.parametrize("output", ["json", "yaml"])
def test_machine_formats_round_trip(output: str) -> None:
    data = [{"name": "demo", "packages": 2, "serving": True, "priority": None}]
    text = render.dump(data, output)
    loaded = orjson.loads(text) if output == "json" else yaml.safe_load(text)
    assert loaded == data


def test_yaml_keeps_key_order() -> None:
    assert render.dump({"z": 1, "a": 2}, "yaml") == "z: 1\na: 2\n"


def test_package_text_shows_every_section() -> None:
    text = render.package_text(summarize("demo", parse_catalog("demo", BODY)["kube-green"]))
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
    text = render.versions_table([("demo", r) for r in rows])
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
