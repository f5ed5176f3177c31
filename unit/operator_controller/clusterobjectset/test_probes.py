"""Probes: built-in readiness per kind, user probes by group/kind or label, exact messages."""

from __future__ import annotations

from typing import Any

import pytest

from olm.operator_controller.clusterobjectset import probes


def obj(api_version: str, kind: str, status: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    metadata = {"name": "x", "namespace": "ns", "generation": 1, **meta}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, "status": status or {}}


def cond(kind: str, status: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "status": status, **extra}


READY_DEPLOYMENT = {
    "replicas": 2,
    "updatedReplicas": 2,
    "observedGeneration": 1,
    "conditions": [cond("Available", "True")],
}


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        pytest.param(obj("v1", "PersistentVolumeClaim", {"phase": "Bound"}), [], id="pvc-bound"),
        pytest.param(
            obj("v1", "PersistentVolumeClaim", {"phase": "Pending"}),
            ['value at key "status.phase" != "Bound"; expected: "Bound" got: "Pending"'],
            id="pvc-pending",
        ),
        pytest.param(obj("v1", "PersistentVolumeClaim"), ['missing key: "status.phase"'], id="pvc-no-status"),
        pytest.param(obj("v1", "Namespace", {"phase": "Active"}), [], id="namespace-active"),
        pytest.param(
            obj(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                {"conditions": [cond("Established", "True")]},
            ),
            [],
            id="crd-established",
        ),
        pytest.param(
            obj("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
            ['missing condition "Established"'],
            id="crd-new",
        ),
        pytest.param(obj("apps/v1", "Deployment", READY_DEPLOYMENT), [], id="deployment-ready"),
        pytest.param(
            obj("apps/v1", "Deployment", {**READY_DEPLOYMENT, "updatedReplicas": 1}),
            ['"status.updatedReplicas" != "status.replicas"; expected equal got: "1" and "2"'],
            id="deployment-updating",
        ),
        pytest.param(
            obj("apps/v1", "Deployment", {**READY_DEPLOYMENT, "observedGeneration": 1}, generation=2),
            ["status describes generation 1, not the current 2"],
            id="deployment-stale-generation",
        ),
        pytest.param(
            obj("apps/v1", "StatefulSet", {**READY_DEPLOYMENT, "conditions": [cond("Available", "False")]}),
            ['condition "Available" is "False"; expected: "True"'],
            id="statefulset-unavailable",
        ),
        pytest.param(
            obj(
                "cert-manager.io/v1",
                "Certificate",
                {"conditions": [cond("Ready", "True", observedGeneration=0)]},
            ),
            ['condition "Ready" describes generation 0, not 1'],
            id="certificate-stale-condition",
        ),
        pytest.param(
            obj("cert-manager.io/v1", "Issuer", {"conditions": [cond("Ready", "True")]}),
            [],
            id="issuer-ready",
        ),
        pytest.param(obj("v1", "ConfigMap"), [], id="configmap-has-no-probe"),
    ],
)
def test_builtin_probes(subject: dict[str, Any], expected: list[str]) -> None:
    assert probes.check(subject, probes.BUILTIN) == expected


def test_user_probes_select_by_group_kind_and_by_label() -> None:
    spec = [
        {
            "selector": {"type": "GroupKind", "groupKind": {"group": "", "kind": "ConfigMap"}},
            "assertions": [{"type": "FieldValue", "fieldValue": {"fieldPath": "data.foo", "value": "bar"}}],
        },
        {
            "selector": {
                "type": "Label",
                "label": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["db"]}]},
            },
            "assertions": [
                {
                    "type": "FieldsEqual",
                    "fieldsEqual": {"fieldA": "spec.replicas", "fieldB": "status.readyReplicas"},
                },
                {"type": "ConditionEqual", "conditionEqual": {"type": "Ready", "status": "True"}},
            ],
        },
    ]
    user = probes.from_spec(spec)
    cm: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "data": {"foo": "baz"},
    }
    assert probes.check(cm, user) == ['value at key "data.foo" != "bar"; expected: "bar" got: "baz"']
    cm["data"]["foo"] = "bar"
    assert probes.check(cm, user) == []
    db: dict[str, Any] = {
        "apiVersion": "example.com/v1",
        "kind": "Database",
        "metadata": {"name": "d", "labels": {"tier": "db"}},
        "spec": {"replicas": 3},
        "status": {"readyReplicas": 3, "conditions": [cond("Ready", "False")]},
    }
    assert probes.check(db, user) == ['condition "Ready" is "False"; expected: "True"']
    db["metadata"]["labels"]["tier"] = "web"
    assert probes.check(db, user) == []  # selects nothing: passes


def test_field_values_compare_as_text() -> None:
    user = probes.from_spec(
        [
            {
                "selector": {"type": "GroupKind", "groupKind": {"group": "x.io", "kind": "Thing"}},
                "assertions": [
                    {"type": "FieldValue", "fieldValue": {"fieldPath": "spec.enabled", "value": "true"}},
                    {"type": "FieldValue", "fieldValue": {"fieldPath": "spec.count", "value": "3"}},
                ],
            }
        ]
    )
    thing = {
        "apiVersion": "x.io/v1",
        "kind": "Thing",
        "metadata": {"name": "t"},
        "spec": {"enabled": True, "count": 3},
    }
    assert probes.check(thing, user) == []


def test_every_builtin_kind_has_a_probe() -> None:
    kinds = [
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("v1", "Namespace"),
        ("v1", "PersistentVolumeClaim"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "StatefulSet"),
        ("cert-manager.io/v1", "Certificate"),
        ("cert-manager.io/v1", "Issuer"),
    ]
    for api_version, kind in kinds:
        assert probes.check(obj(api_version, kind), probes.BUILTIN), kind


def test_object_labels_name_kind_version_group_and_place() -> None:
    assert probes.object_label(obj("apps/v1", "Deployment")) == "Deployment.v1.apps ns/x"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "a.b"},
    }
    assert probes.object_label(crd) == "CustomResourceDefinition.v1.apiextensions.k8s.io a.b"


def test_a_check_made_by_a_builtin_and_a_user_probe_fails_once() -> None:
    pvc = obj("v1", "PersistentVolumeClaim", {"phase": "Pending"})
    user = probes.from_spec(
        [
            {
                "selector": {
                    "type": "GroupKind",
                    "groupKind": {"group": "", "kind": "PersistentVolumeClaim"},
                },
                "assertions": [
                    {"type": "FieldValue", "fieldValue": {"fieldPath": "status.phase", "value": "Bound"}},
                    {"type": "FieldValue", "fieldValue": {"fieldPath": "spec.volumeName", "value": "pv"}},
                ],
            }
        ]
    )
    assert probes.check(pvc, (*probes.BUILTIN, *user)) == [
        'value at key "status.phase" != "Bound"; expected: "Bound" got: "Pending"',
        'missing key: "spec.volumeName"',
    ]
