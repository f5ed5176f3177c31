"""CRD upgrade safety: one case per kind of change, upstream's message texts, real CRD pairs."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from olm.pipeline.preflight import CRDUpgradeSafetyError, crdupgradesafety
from unit import realdata

NAME = "widgets.example.com"


def crd(**spec_props: Any) -> dict[str, Any]:
    """A CRD with one served+stored version v1 whose spec has the given properties."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [_version("v1", spec_props)],
        },
        "status": {"storedVersions": ["v1"]},
    }


def _version(
    name: str, spec_props: dict[str, Any], served: bool = True, storage: bool = True
) -> dict[str, Any]:
    return {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": {
            "openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object", "properties": copy.deepcopy(spec_props)}},
            }
        },
    }


def _spec(obj: dict[str, Any], version: int = 0) -> dict[str, Any]:
    schema: dict[str, Any] = obj["spec"]["versions"][version]["schema"]["openAPIV3Schema"]["properties"][
        "spec"
    ]
    return schema


def changed(old: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    new = copy.deepcopy(old)
    change(new)
    return new


def _set(path: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        node = _spec(obj)
        if path:
            node = node["properties"][path]
        if value is None:
            node.pop(key, None)
        else:
            node[key] = value

    return change


STRING = {"x": {"type": "string"}}
CASES = [
    pytest.param(crd(**STRING), _set("x", "description", "new words"), [], id="description-change-is-safe"),
    pytest.param(
        crd(**STRING),
        _set("", "properties", {**STRING, "y": {"type": "string"}}),
        [],
        id="new-optional-field",
    ),
    pytest.param(
        crd(x={"type": "string", "enum": ["a"]}),
        _set("x", "enum", ["a", "b"]),
        [],
        id="enum-value-added-is-safe",
    ),
    pytest.param(
        crd(x={"type": "integer", "maximum": 5}), _set("x", "maximum", 9), [], id="maximum-raised-is-safe"
    ),
    pytest.param(
        crd(x={"type": "integer", "minimum": 5}), _set("x", "minimum", 1), [], id="minimum-lowered-is-safe"
    ),
    pytest.param(
        crd(**STRING) | {},
        lambda o: o["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].update(
            required=[]
        ),
        [],
        id="empty-required-is-no-change",
    ),
    pytest.param(
        crd(**STRING),
        lambda o: o["spec"].update(scope="Cluster"),
        ['scope: scope changed : "Namespaced" -> "Cluster"'],
        id="scope-changed",
    ),
    pytest.param(
        crd(**STRING),
        lambda o: o["spec"]["versions"].__setitem__(0, _version("v2", STRING)),
        ["storedVersionRemoval: stored versions removed : [v1]"],
        id="stored-version-removed",
    ),
    pytest.param(
        crd(**STRING),
        _set("", "properties", {}),
        [
            "existingFieldRemoval: removed field : v1.^.spec.x",
            'v1: ^.spec.x: type: type changed : "string" -> ""',
        ],
        id="field-removed",
    ),
    pytest.param(
        crd(x={"type": "boolean"}),
        _set("x", "type", "string"),
        ['v1: ^.spec.x: type: type changed : "boolean" -> "string"'],
        id="type-changed",
    ),
    pytest.param(
        crd(**STRING),
        _set("", "required", ["x"]),
        ["v1: ^.spec: required: new required fields: [x]"],
        id="new-required-field",
    ),
    pytest.param(
        crd(**STRING),
        _set("x", "default", "foo"),
        ['v1: ^.spec.x: default: default added when there was none previously : "\\"foo\\""'],
        id="default-added",
    ),
    pytest.param(
        crd(x={"type": "integer", "default": 1}),
        _set("x", "default", 2),
        ['v1: ^.spec.x: default: default value changed : "1" -> "2"'],
        id="default-changed",
    ),
    pytest.param(
        crd(x={"type": "object", "default": {"b": 1, "a": [True]}}),
        _set("x", "default", None),
        ['v1: ^.spec.x: default: default value removed : "{\\"a\\":[true],\\"b\\":1}"'],
        id="default-removed",
    ),
    pytest.param(
        crd(**STRING),
        _set("x", "enum", ["a", "b"]),
        ['v1: ^.spec.x: enum: enum constraint added when there was none previously : ["a" "b"]'],
        id="enum-added",
    ),
    pytest.param(
        crd(x={"type": "string", "enum": ["a", "b", "c"]}),
        _set("x", "enum", ["b"]),
        ['v1: ^.spec.x: enum: allowed enum values removed : ["a" "c"]'],
        id="enum-values-removed",
    ),
    pytest.param(
        crd(x={"type": "integer", "maximum": 10}),
        _set("x", "maximum", 5),
        ["v1: ^.spec.x: maximum: maximum decreased : 10 -> 5"],
        id="maximum-decreased",
    ),
    pytest.param(
        crd(x={"type": "integer"}),
        _set("x", "maximum", 1000000),
        ["v1: ^.spec.x: maximum: maximum constraint added when there was none previously : 1e+06"],
        id="maximum-added-go-float-format",
    ),
    pytest.param(
        crd(x={"type": "integer", "minimum": 1.5}),
        _set("x", "minimum", 2),
        ["v1: ^.spec.x: minimum: minimum increased : 1.5 -> 2"],
        id="minimum-increased",
    ),
    pytest.param(
        crd(**STRING),
        _set("x", "minLength", 3),
        ["v1: ^.spec.x: minLength: minimum constraint added when there was none previously : 3"],
        id="min-length-added",
    ),
    pytest.param(
        crd(x={"type": "string", "maxLength": 10}),
        _set("x", "maxLength", 5),
        ["v1: ^.spec.x: maxLength: maximum decreased : 10 -> 5"],
        id="max-length-decreased",
    ),
    pytest.param(
        crd(x={"type": "array", "items": {"type": "string"}, "minItems": 1}),
        _set("x", "minItems", 2),
        ["v1: ^.spec.x: minItems: minimum increased : 1 -> 2"],
        id="min-items-increased",
    ),
    pytest.param(
        crd(x={"type": "array", "items": {"type": "string"}}),
        _set("x", "maxItems", 4),
        ["v1: ^.spec.x: maxItems: maximum constraint added when there was none previously : 4"],
        id="max-items-added",
    ),
    pytest.param(
        crd(x={"type": "object", "maxProperties": 4}),
        _set("x", "maxProperties", 3),
        ["v1: ^.spec.x: maxProperties: maximum decreased : 4 -> 3"],
        id="max-properties-decreased",
    ),
    pytest.param(
        crd(x={"type": "object"}),
        _set("x", "minProperties", 1),
        ["v1: ^.spec.x: minProperties: minimum constraint added when there was none previously : 1"],
        id="min-properties-added",
    ),
    pytest.param(
        crd(**STRING),
        _set("x", "pattern", "^a+$"),
        ['v1: ^.spec.x: pattern: pattern added : "" -> "^a+$"'],
        id="pattern-added",
    ),
    pytest.param(
        crd(x={"type": "string", "pattern": "^a$"}),
        _set("x", "pattern", "^b$"),
        ['v1: ^.spec.x: pattern: pattern changed : "^a$" -> "^b$"'],
        id="pattern-changed",
    ),
    pytest.param(
        crd(x={"type": "string", "pattern": "^a$"}),
        _set("x", "pattern", None),
        ['v1: ^.spec.x: pattern: pattern removed : "^a$" -> ""'],
        id="pattern-removed",
    ),
    pytest.param(
        crd(**STRING),
        _set("x", "nullable", True),
        ["v1: ^.spec.x: nullable: nullable added : false -> true"],
        id="nullable-added",
    ),
    pytest.param(
        crd(x={"type": "string", "nullable": True}),
        _set("x", "nullable", None),
        ["v1: ^.spec.x: nullable: nullable removed : true -> false"],
        id="nullable-removed",
    ),
    pytest.param(
        crd(**STRING),
        _set("x", "format", "email"),
        ['v1: ^.spec.x: unhandled: unhandled changes found (Format "" -> "email")'],
        id="unhandled-format",
    ),
    pytest.param(
        crd(x={"type": "array", "items": {"type": "string"}}),
        _set("x", "x-kubernetes-list-type", "set"),
        ['v1: ^.spec.x: unhandled: unhandled changes found (XListType nil -> &"set")'],
        id="unhandled-list-type",
    ),
    pytest.param(
        crd(x={"type": "object", "x-kubernetes-validations": [{"rule": "self.a > 0"}]}),
        _set("x", "x-kubernetes-validations", [{"rule": "self.a > 1"}]),
        [
            "v1: ^.spec.x: unhandled: unhandled changes found (XValidations <complex value> -> "
            "<complex value> (changed))"
        ],
        id="unhandled-validation-rule",
    ),
    pytest.param(
        crd(x={"type": "string", "enum": ["a"]}),
        lambda o: (_set("x", "type", "integer")(o), _set("x", "enum", [1])(o)),
        [
            'v1: ^.spec.x: enum: allowed enum values removed : ["a"]',
            'v1: ^.spec.x: type: type changed : "string" -> "integer"',
        ],
        id="every-violation-reported",
    ),
]


@pytest.mark.parametrize(("old", "change", "expected"), CASES)
def test_changes(old: dict[str, Any], change: Callable[[dict[str, Any]], None], expected: list[str]) -> None:
    assert crdupgradesafety.violations(old, changed(old, change)) == expected


def test_error_message_format() -> None:
    old = crd(x={"type": "boolean"})
    new = changed(old, _set("x", "type", "string"))
    assert crdupgradesafety.error_message(old, new) == (
        'validating upgrade for CRD "widgets.example.com": v1: ^.spec.x: type: type changed : '
        '"boolean" -> "string"'
    )
    assert crdupgradesafety.error_message(old, old) is None


def _two_versions(v2_props: dict[str, Any], conversion: dict[str, Any] | None = None) -> dict[str, Any]:
    obj = crd(x={"type": "string", "enum": ["a", "b"]})
    obj["spec"]["versions"] = [
        _version("v1", {"x": {"type": "string", "enum": ["a", "b"]}}, storage=False),
        _version("v2", v2_props),
    ]
    if conversion is not None:
        obj["spec"]["conversion"] = conversion
    return obj


def test_served_versions_must_be_compatible() -> None:
    old = _two_versions({"x": {"type": "string", "enum": ["a", "b"]}})
    new = _two_versions({"x": {"type": "string", "enum": ["a"]}})
    assert crdupgradesafety.violations(old, new) == [
        'v2: ^.spec.x: enum: allowed enum values removed : ["b"]',
        'v1 -> v2: ^.spec.x: enum: allowed enum values removed : ["b"]',
    ]


def test_served_version_problems_the_old_crd_had_are_not_reported_again() -> None:
    old = _two_versions({"x": {"type": "string", "enum": ["a"]}})
    assert crdupgradesafety.violations(old, copy.deepcopy(old)) == []
    new = _two_versions({"x": {"type": "string", "enum": ["a"]}, "y": {"type": "string"}})
    new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["y"] = {
        "type": "boolean"
    }
    assert crdupgradesafety.violations(old, new) == [
        'v1 -> v2: ^.spec.y: type: type changed : "boolean" -> "string"'
    ]


def test_served_versions_skipped_with_a_conversion_webhook() -> None:
    webhook = {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"]}}
    old = _two_versions({"x": {"type": "string", "enum": ["a", "b"]}})
    new = _two_versions(
        {"x": {"type": "string", "enum": ["a", "b"]}, "z": {"type": "string"}}, conversion=webhook
    )
    new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["x"][
        "enum"
    ] = ["a", "b", "c"]
    assert crdupgradesafety.violations(old, new) == []


def test_served_version_order_is_kube_aware() -> None:
    obj = crd(**STRING)
    obj["spec"]["versions"] = [
        _version(name, {"x": {"type": "string" if name != "v1beta1" else "integer"}}, storage=name == "v1")
        for name in ("v1", "v1alpha1", "v1beta1")
    ]
    new = copy.deepcopy(obj)
    new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["w"] = {
        "type": "string"
    }
    old = copy.deepcopy(obj)
    old["spec"]["versions"] = [v for v in old["spec"]["versions"] if v["name"] != "v1beta1"]
    assert crdupgradesafety.violations(old, new) == [
        'v1alpha1 -> v1beta1: ^.spec.x: type: type changed : "string" -> "integer"',
        'v1beta1 -> v1: ^.spec.x: type: type changed : "integer" -> "string"',
    ]


def test_check_only_compares_existing_crds_and_lists_every_unsafe_one() -> None:
    unsafe_a = crd(x={"type": "boolean"})
    unsafe_b = changed(crd(**STRING), lambda o: o["metadata"].update(name="gadgets.example.com"))
    new_a = changed(unsafe_a, _set("x", "type", "string"))
    new_b = changed(unsafe_b, lambda o: o["spec"].update(scope="Cluster"))
    brand_new = changed(crd(**STRING), lambda o: o["metadata"].update(name="new.example.com"))
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": NAME}}
    existing = {NAME: unsafe_a, "gadgets.example.com": unsafe_b}
    with pytest.raises(CRDUpgradeSafetyError) as err:
        crdupgradesafety.check([new_a, config_map, new_b, brand_new], existing)
    assert err.value.messages == [
        'validating upgrade for CRD "widgets.example.com": v1: ^.spec.x: type: type changed : '
        '"boolean" -> "string"',
        'validating upgrade for CRD "gadgets.example.com": scope: scope changed : "Namespaced" -> "Cluster"',
    ]
    assert str(err.value) == "\n".join(err.value.messages)
    crdupgradesafety.check([brand_new, copy.deepcopy(unsafe_a)], existing)


def _with_stored_versions(obj: dict[str, Any]) -> dict[str, Any]:
    """A bundle CRD as the cluster holds it after installation (its storage version recorded)."""
    out = copy.deepcopy(obj)
    out["status"] = {"storedVersions": [v["name"] for v in out["spec"]["versions"] if v.get("storage")]}
    return out


def _real_check(package: str, old_version: str, new_version: str) -> list[str]:
    old, new = realdata.real_bundle(package, old_version), realdata.real_bundle(package, new_version)
    existing = {c["metadata"]["name"]: _with_stored_versions(c) for c in old.crds}
    try:
        crdupgradesafety.check(new.crds, existing)
    except CRDUpgradeSafetyError as err:
        return err.messages
    return []


@pytest.mark.parametrize(
    ("package", "old", "new"),
    [
        pytest.param("sailoperator", "1.25.0", "1.25.1", id="sailoperator-1.25.0-1.25.1"),
        pytest.param("infinispan", "2.4.17", "2.4.18", id="infinispan-2.4.17-2.4.18"),
        pytest.param("infinispan", "2.2.4", "2.2.5", id="infinispan-2.2.4-2.2.5-webhooks-added"),
        pytest.param("kube-green", "0.6.0", "0.7.0", id="kube-green-0.6.0-0.7.0"),
        pytest.param("cat-facts-operator", "1.1.1", "1.1.2", id="cat-facts-1.1.1-1.1.2"),
        pytest.param("victoriametrics-operator", "0.74.0", "0.74.1", id="victoriametrics-0.74.0-0.74.1"),
    ],
)
def test_real_safe_upgrades(package: str, old: str, new: str) -> None:
    assert _real_check(package, old, new) == []


def test_real_sailoperator_default_version_bump_is_blocked() -> None:
    messages = _real_check("sailoperator", "1.25.1", "1.25.2")
    crds = sorted(m.split('"')[1] for m in messages)
    assert crds == ["istiocnis.sailoperator.io", "istios.sailoperator.io", "ztunnels.sailoperator.io"]
    assert any(
        'v1: ^.spec.version: default: default value changed : "\\"v1.25.1\\"" -> "\\"v1.25.2\\""' in m
        for m in messages
    )


def test_real_infinispan_pattern_change_is_blocked() -> None:
    [message] = _real_check("infinispan", "2.2.5", "2.3.0")
    assert message.startswith('validating upgrade for CRD "infinispans.infinispan.org": v1: ')
    assert "^.spec.dependencies.artifacts.items.url: pattern: pattern changed : " in message


def test_real_prometheus_upgrade_reports_every_violation() -> None:
    messages = _real_check("prometheus", "0.47.0", "0.56.3")
    assert len(messages) == 7
    violations = [line for m in messages for line in m.split("\n")]
    assert any("enum: enum constraint added when there was none previously" in v for v in violations)
    assert len(violations) > 20


def test_a_crd_compared_with_itself_is_safe_for_every_real_bundle() -> None:
    realdata.require()
    for path in realdata.bundle_dirs()[::7]:
        for obj in realdata.load(path).crds:
            assert crdupgradesafety.violations(_with_stored_versions(obj), obj) == [], obj["metadata"]["name"]
