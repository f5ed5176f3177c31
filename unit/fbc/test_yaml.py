"""YAML means what it means to Kubernetes (sigs.k8s.io/yaml on go-yaml v2), not what PyYAML says."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest
import yaml

from olm import fbc
from olm.compat import kubeyaml


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("=", "=", id="bare-equals-is-a-string"),
        pytest.param("2021-03-01", "2021-03-01", id="date-stays-a-string"),
        pytest.param(
            "2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00", id="timestamp-stays-a-string"
        ),
        pytest.param("1:20", "1:20", id="no-sexagesimal"),
        pytest.param("8080:80", "8080:80", id="port-mapping"),
        pytest.param("0o17", 15, id="0o-octal"),
        pytest.param("017", 15, id="leading-zero-octal"),
        pytest.param("0x1F", 31, id="hex"),
        pytest.param("0b101", 5, id="binary"),
        pytest.param("1_000", 1000, id="underscores"),
        pytest.param("-42", -42, id="negative"),
        pytest.param("1e3", 1000.0, id="exponent-without-dot"),
        pytest.param("1.5", 1.5, id="float"),
        pytest.param(".5", 0.5, id="leading-dot-float"),
        pytest.param("y", True, id="y-is-true"),
        pytest.param("N", False, id="N-is-false"),
        pytest.param("on", True, id="on"),
        pytest.param("Off", False, id="off"),
        pytest.param("~", None, id="tilde-null"),
        pytest.param("1.2.3", "1.2.3", id="version-string"),
        pytest.param("v1", "v1", id="v-prefixed"),
        pytest.param("!!binary aGVsbG8=", "aGVsbG8=", id="binary-becomes-base64"),
        pytest.param("'='", "=", id="quoted"),
    ],
)
def test_scalars(text: str, expected: Any) -> None:
    assert kubeyaml.loads(f"value: {text}\n") == {"value": expected}


def test_pyyaml_safe_loader_differs_where_it_matters() -> None:
    """The trap in the real data: PyYAML refuses a bare `=`, Kubernetes reads the string."""
    with pytest.raises(yaml.constructor.ConstructorError):
        yaml.safe_load("enum: [=]")
    assert kubeyaml.loads("enum: [=]") == {"enum": ["="]}


def test_non_string_keys_become_json_strings() -> None:
    stream = io.BytesIO(b"schema: s\n1: one\ntrue: yes\ny: x\n")
    [meta] = fbc.iter_stream(stream, "a.yaml")
    assert orjson.loads(meta.blob) == {"schema": "s", "1": "one", "true": "x"}  # `y` is the key true too


def test_merge_keys_and_anchors() -> None:
    text = "base: &b {a: 1}\nschema: s\nother:\n  <<: *b\n  c: 2\n"
    assert kubeyaml.loads(text)["other"] == {"a": 1, "c": 2}


def test_documents_are_built_one_at_a_time_with_their_start_line() -> None:
    stream = io.BytesIO(b"# header\n---\na: 1\n---\n\n---\nb: 2\n")
    assert list(kubeyaml.iter_documents(stream)) == [(3, {"a": 1}), (7, {"b": 2})]
