"""Table, JSON and YAML output."""

from __future__ import annotations

import orjson
import pytest
import yaml

from olm.cli import render


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
