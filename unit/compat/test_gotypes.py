"""Go encoding details rendering depends on: struct round trips, quantities, JSON bytes, names."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from olm.compat import gojson, gotypes, k8stypes, quantity
from olm.pipeline.render import object_name, unique_name
from unit import realdata


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2000m", "2", id="milli-to-whole"),
        pytest.param("1024Mi", "1Gi", id="binary-up"),
        pytest.param("0.5", "500m", id="fraction"),
        pytest.param("1.5Gi", "1536Mi", id="binary-fraction"),
        pytest.param("0.5Ki", "512", id="small-binary-becomes-decimal"),
        pytest.param("1000", "1k", id="decimal-suffix"),
        pytest.param("1e3", "1e3", id="exponent-kept"),
        pytest.param("128974848", "128974848", id="plain-bytes"),
        pytest.param("100m", "100m", id="already-canonical"),
        pytest.param("0", "0", id="zero"),
        pytest.param("0.0000000001", "1n", id="rounds-up-to-nano"),
        pytest.param("-1", "-1", id="negative"),
    ],
)
def test_quantity_canonical(text: str, expected: str) -> None:
    assert quantity.canonical(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "1Xi", "1.2.3"])
def test_quantity_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="quantities must match"):
        quantity.canonical(text)


@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(["", "m", "k", "Mi", "Gi", "Ki"]))
def test_quantity_canonical_is_idempotent(number: int, suffix: str) -> None:
    once = quantity.canonical(f"{number}{suffix}")
    assert quantity.canonical(once) == once


def test_gojson_matches_go_encoding() -> None:
    assert gojson.dumps({"b": [1, 2.5, 1e21, None, True], "a": "<&>\u2028é"}) == (
        '{"b":[1,2.5,1e+21,null,true],"a":"\\u003c\\u0026\\u003e\\u2028é"}'
    )
    assert gojson.dumps({"b": 1, "a": 2}, sort_keys=True) == '{"a":2,"b":1}'


def test_object_name_truncates_the_base() -> None:
    assert object_name("short", "suffix") == "short-suffix"
    name = object_name("a" * 70, "x" * 10)
    assert len(name) == 63
    assert name.endswith("-" + "x" * 10)


def test_unique_name_is_upstreams_hash() -> None:
    """Names from upstream's golden output for argocd-operator v0.6.0's two permissions."""
    realdata.require()
    csv = realdata.load(realdata.GOLDEN / "bundles" / "argocd-operator.v0.6.0").csv
    [permission], [cluster_permission] = csv.permissions, csv.cluster_permissions
    base = f"{csv.name}-{permission.service_account_name}"
    assert (
        unique_name(base, permission.go_value())
        == "argocd-operator.v0-22gmilmgp91wu25is5i2ec598hni8owq3l71bbkl7iz3"
    )
    assert unique_name(base, cluster_permission.go_value()) == (
        "argocd-operator.v0-1dhiybrldl1gyksid1dk2dqjsc72psdybc7iyvse5gpx"
    )


@pytest.mark.parametrize(
    ("go_type", "value", "expected"),
    [
        pytest.param(
            k8stypes.POLICY_RULE,
            {"resources": ["a"], "verbs": ["get"], "x": 1},
            {"verbs": ["get"], "resources": ["a"]},
            id="unknown-dropped-declaration-order",
        ),
        pytest.param(
            k8stypes.POLICY_RULE, {"apiGroups": []}, {"verbs": None}, id="nil-slice-without-omitempty-is-null"
        ),
        pytest.param(
            k8stypes.RESOURCE_REQUIREMENTS,
            {"limits": {"cpu": 0.5}},
            {"limits": {"cpu": "500m"}},
            id="quantities",
        ),
        pytest.param(
            k8stypes.DEPLOYMENT_SPEC,
            {"template": {"spec": {"containers": [{"name": "c", "env": []}]}}},
            {
                "template": {"metadata": {}, "spec": {"containers": [{"name": "c", "resources": {}}]}},
                "strategy": {},
            },
            id="non-pointer-structs-always-present",
        ),
        pytest.param(
            k8stypes.ENV_VAR,
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "0"}}},
            id="zero-quantity-is-0",
        ),
        pytest.param(
            k8stypes.VOLUME,
            {"name": "v", "emptyDir": {}},
            {"name": "v", "emptyDir": {}},
            id="empty-pointer-kept",
        ),
        pytest.param(
            k8stypes.JSON_SCHEMA_PROPS,
            {"type": "object", "nullable": False, "required": []},
            {"type": "object"},
            id="schema-omitempty",
        ),
        pytest.param(
            k8stypes.JSON_SCHEMA_PROPS,
            {"maximum": 10.0, "x-kubernetes-preserve-unknown-fields": False},
            {"maximum": 10, "x-kubernetes-preserve-unknown-fields": False},
            id="schema-pointers",
        ),
        pytest.param(
            k8stypes.OBJECT_META,
            {"name": "x", "creationTimestamp": None},
            {"name": "x"},
            id="creation-timestamp-omitzero",
        ),
    ],
)
def test_roundtrip(go_type: gotypes.GoType, value: Any, expected: Any) -> None:
    out = gotypes.roundtrip(go_type, value)
    assert out == expected
    assert list(out) == list(expected), "keys in Go declaration order"


@pytest.mark.parametrize(
    ("go_type", "value", "message"),
    [
        pytest.param(
            k8stypes.DEPLOYMENT_SPEC,
            {"replicas": "1"},
            ".replicas: cannot decode string into integer",
            id="int",
        ),
        pytest.param(
            k8stypes.POLICY_RULE, {"verbs": "get"}, ".verbs: cannot decode string into array", id="slice"
        ),
        pytest.param(
            k8stypes.OBJECT_META,
            {"labels": {"a": 1}},
            ".labels.a: cannot decode number into string",
            id="map",
        ),
        pytest.param(
            k8stypes.DEPLOYMENT_SPEC,
            {"template": []},
            ".template: cannot decode array into object",
            id="struct",
        ),
    ],
)
def test_roundtrip_type_errors_name_the_path(go_type: gotypes.GoType, value: Any, message: str) -> None:
    with pytest.raises(gotypes.GoTypeError, match=message.replace(".", r"\.")):
        gotypes.roundtrip(go_type, value)
