"""YAML read with Kubernetes (go-yaml v2) semantics rather than PyYAML's YAML 1.1."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from olm.compat import kubeyaml
from unit import realdata


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("v: =", "=", id="bare-equals-is-a-string"),
        pytest.param("v: 2024-01-02", "2024-01-02", id="timestamp-stays-string"),
        pytest.param("v: 1:20", "1:20", id="sexagesimal-stays-string"),
        pytest.param("v: y", True, id="y-is-true"),
        pytest.param("v: N", False, id="N-is-false"),
        pytest.param("v: on", True, id="on-is-true"),
        pytest.param("v: Off", False, id="Off-is-false"),
        pytest.param("v: 'yes'", "yes", id="quoted-stays-string"),
        pytest.param("v: 0x1F", 31, id="hex"),
        pytest.param("v: 0o17", 15, id="octal-0o"),
        pytest.param("v: 017", 15, id="octal-leading-zero"),
        pytest.param("v: 0b101", 5, id="binary"),
        pytest.param("v: 1_000", 1000, id="underscores"),
        pytest.param("v: 1.0", 1, id="integral-float-becomes-int"),
        pytest.param("v: 1.5", 1.5, id="float"),
        pytest.param("v: 1e3", 1000, id="exponent"),
        pytest.param("v: ~", None, id="tilde-null"),
        pytest.param("v:", None, id="empty-null"),
        pytest.param("v: _1", "_1", id="underscore-prefix-is-string"),
    ],
)
def test_scalars(text: str, expected: Any) -> None:
    [doc] = kubeyaml.load_documents(text)
    assert doc["v"] == expected
    assert type(doc["v"]) is type(expected)


def test_keys_are_strings_and_never_collide() -> None:
    [doc] = kubeyaml.load_documents("1: a\ntrue: b\nn: c\n1.0: d\n")
    assert doc == {"1": "d", "true": "b", "false": "c"}


def test_merge_keys() -> None:
    [doc] = kubeyaml.load_documents("base: &b {x: 1}\nderived:\n  <<: *b\n  z: 2\n")
    assert doc["derived"] == {"x": 1, "z": 2}


def test_y_key_is_a_boolean_as_in_kubernetes() -> None:
    [doc] = kubeyaml.load_documents("y: 1\n")
    assert doc == {"true": 1}


def test_multi_document_stream_skips_empty_documents() -> None:
    assert kubeyaml.load_documents("---\na: 1\n---\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]


def test_json_document() -> None:
    assert kubeyaml.load_documents(b'{"kind": "ConfigMap", "data": {"on": "x"}}') == [
        {"kind": "ConfigMap", "data": {"on": "x"}}
    ]


def test_syntax_error_names_the_source() -> None:
    with pytest.raises(kubeyaml.ManifestYAMLError, match=r"error parsing manifests/x\.yaml"):
        kubeyaml.load_documents("a: [1, 2\n", "manifests/x.yaml")


def test_prometheus_alertmanagerconfigs_bare_equals_enum() -> None:
    """The README trap: PyYAML's safe loader refuses this real CRD; Kubernetes reads "=" as a string."""
    realdata.require()
    path = (
        realdata.BUNDLES
        / "prometheus"
        / "0.56.3"
        / "manifests"
        / "monitoring.coreos.com_alertmanagerconfigs.yaml"
    )
    text = path.read_text()
    with pytest.raises(yaml.constructor.ConstructorError):
        yaml.safe_load(text)
    [crd] = kubeyaml.load_documents(text)
    enums = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("enum"), list):
                enums.append(node["enum"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(crd)
    assert any("=" in enum for enum in enums)
    assert all(isinstance(v, str) for enum in enums for v in enum if "=" in enum)
