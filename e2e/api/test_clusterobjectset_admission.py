"""ClusterObjectSet admission: revision, lifecycle, phases, objects and refs, probes."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.api.conftest import Objects, unique_name
from e2e.api.objects import (
    CONDITION_EQUAL,
    DELETE,
    GROUP_KIND_SELECTOR,
    cluster_object_set,
    configmap,
    probe,
    with_,
)

pytestmark = pytest.mark.e2e

UNSUPPORTED = "Unsupported value"
ONE_OF = "exactly one of object or ref must be set"
PHASE_NAME = "phase name must be a valid DNS-1123 label"
OBJ = "spec.phases.0.objects.0"
PROBES = "spec.progressionProbes"
FIELD_PATH = "field path must be letters and digits"
REF = {"name": "content", "namespace": "olmv1-system", "key": "k"}
LABEL_PROBE = {"type": "Label", "label": {"matchLabels": {"app": "db"}}}
FIELD_VALUE = {"type": "FieldValue", "fieldValue": {"fieldPath": "status.phase", "value": "Bound"}}
FIELDS_EQUAL = {
    "type": "FieldsEqual",
    "fieldsEqual": {"fieldA": "spec.replicas", "fieldB": "status.readyReplicas"},
}


def _phases(count: int) -> list[dict[str, Any]]:
    return [{"name": f"p{i}", "objects": [{"ref": REF}]} for i in range(count)]


def _objects(count: int) -> list[dict[str, Any]]:
    return [{"object": configmap(f"cm-{i}")} for i in range(count)]


CASES = [
    pytest.param((), None, id="inline-and-ref-phases"),
    pytest.param((("spec.phases", DELETE),), None, id="no-phases"),
    pytest.param((("spec.lifecycleState", "Archived"),), None, id="created-archived"),
    pytest.param(((f"{OBJ}.ref", REF),), ONE_OF, id="object-and-ref"),
    pytest.param(((OBJ, {"collisionProtection": "None"}),), ONE_OF, id="neither-object-nor-ref"),
    pytest.param((("spec.revision", 0),), "should be greater than or equal to 1", id="revision-0"),
    pytest.param((("spec.revision", 9007199254740993),), None, id="revision-int64"),
    pytest.param((("spec.revision", DELETE),), "spec.revision: Required value", id="revision-missing"),
    pytest.param((("spec.lifecycleState", "Deleted"),), UNSUPPORTED, id="lifecycle-unknown"),
    pytest.param(
        (("spec.lifecycleState", DELETE),), "spec.lifecycleState: Required value", id="lifecycle-missing"
    ),
    pytest.param(
        (("spec.collisionProtection", DELETE),),
        "spec.collisionProtection: Required value",
        id="collision-missing",
    ),
    pytest.param((("spec.collisionProtection", "Always"),), UNSUPPORTED, id="collision-unknown"),
    pytest.param((("spec.collisionProtection", "IfNoController"),), None, id="collision-if-no-controller"),
    pytest.param((("spec.phases.0.collisionProtection", "None"),), None, id="phase-collision-none"),
    pytest.param(
        (("spec.phases.0.collisionProtection", "Maybe"),), UNSUPPORTED, id="phase-collision-unknown"
    ),
    pytest.param(((f"{OBJ}.collisionProtection", "IfNoController"),), None, id="object-collision"),
    pytest.param(((f"{OBJ}.collisionProtection", "Never"),), UNSUPPORTED, id="object-collision-unknown"),
    pytest.param((("spec.phases.0.name", "CRDs"),), PHASE_NAME, id="phase-name-uppercase"),
    pytest.param((("spec.phases.0.name", "my.phase"),), PHASE_NAME, id="phase-name-dotted"),
    pytest.param((("spec.phases.0.name", "x" * 64),), "Too long", id="phase-name-64-chars"),
    pytest.param((("spec.phases.1.name", "configuration"),), "Duplicate value", id="phase-names-not-unique"),
    pytest.param((("spec.phases", _phases(20)),), None, id="phases-20"),
    pytest.param((("spec.phases", _phases(21)),), "must have at most 20 items", id="phases-21"),
    pytest.param((("spec.phases.0.objects", _objects(50)),), None, id="objects-50"),
    pytest.param((("spec.phases.0.objects", _objects(51)),), "must have at most 50 items", id="objects-51"),
    pytest.param((("spec.phases.0.objects", []),), "should have at least 1 items", id="objects-0"),
    pytest.param(((f"{OBJ}.object.kind", DELETE),), "kind: Required value", id="embedded-without-kind"),
    pytest.param(
        ((f"{OBJ}.object.apiVersion", DELETE),),
        "apiVersion: Required value",
        id="embedded-without-api-version",
    ),
    pytest.param(((f"{OBJ}", {"ref": {"name": "s"}}),), "key: Required value", id="ref-without-key"),
    pytest.param(
        ((f"{OBJ}", {"ref": {"name": "", "key": "k"}}),), "at least 1 chars long", id="ref-empty-name"
    ),
    pytest.param(
        ((f"{OBJ}", {"ref": {"name": "s", "key": "k", "namespace": "n" * 64}}),),
        "Too long",
        id="ref-namespace-64",
    ),
    pytest.param(((f"{OBJ}", {"ref": {"name": "s", "key": "k"}}),), None, id="ref-without-namespace"),
    pytest.param((("spec.progressDeadlineMinutes", 9),), "greater than or equal to 10", id="deadline-9"),
    pytest.param((("spec.progressDeadlineMinutes", 721),), "less than or equal to 720", id="deadline-721"),
    pytest.param((("spec.progressDeadlineMinutes", 60),), None, id="deadline-60"),
    pytest.param(((PROBES, [probe(GROUP_KIND_SELECTOR, CONDITION_EQUAL)]),), None, id="probe-group-kind"),
    pytest.param(((PROBES, [probe(LABEL_PROBE, FIELD_VALUE, FIELDS_EQUAL)]),), None, id="probe-label"),
    pytest.param(
        (
            (
                PROBES,
                [
                    probe(
                        {
                            "type": "Label",
                            "label": {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
                        },
                        FIELD_VALUE,
                    )
                ],
            ),
        ),
        None,
        id="probe-label-expressions",
    ),
    pytest.param(
        (
            (
                PROBES,
                [
                    probe(
                        {"type": "Label", "label": {"matchLabels": {"a": "b"}, "matchExpressions": []}},
                        FIELD_VALUE,
                    )
                ],
            ),
        ),
        "exactly one of matchLabels or matchExpressions must be set",
        id="probe-label-both",
    ),
    pytest.param(
        ((PROBES, [probe({"type": "Label", "label": {}}, FIELD_VALUE)]),),
        "exactly one of matchLabels or matchExpressions must be set",
        id="probe-label-neither",
    ),
    pytest.param(
        ((PROBES, [probe({**GROUP_KIND_SELECTOR, "label": {"matchLabels": {"a": "b"}}}, FIELD_VALUE)]),),
        "label is required when type is Label, and must not be set otherwise",
        id="probe-group-kind-with-label",
    ),
    pytest.param(
        ((PROBES, [probe({"type": "GroupKind"}, FIELD_VALUE)]),),
        "groupKind is required when type is GroupKind",
        id="probe-group-kind-missing",
    ),
    pytest.param(
        ((PROBES, [probe(GROUP_KIND_SELECTOR, {**CONDITION_EQUAL, "type": "FieldsEqual"})]),),
        "fieldsEqual is required when type is FieldsEqual",
        id="assertion-type-mismatch",
    ),
    pytest.param(
        (
            (
                PROBES,
                [
                    probe(
                        GROUP_KIND_SELECTOR,
                        {"type": "FieldValue", "fieldValue": {"fieldPath": "spec..x", "value": "1"}},
                    )
                ],
            ),
        ),
        FIELD_PATH,
        id="field-path-double-dot",
    ),
    pytest.param(
        (
            (
                PROBES,
                [
                    probe(
                        GROUP_KIND_SELECTOR,
                        {"type": "FieldsEqual", "fieldsEqual": {"fieldA": "a", "fieldB": "b[0]"}},
                    )
                ],
            ),
        ),
        FIELD_PATH,
        id="field-path-index",
    ),
    pytest.param(
        (
            (
                PROBES,
                [
                    probe(
                        GROUP_KIND_SELECTOR,
                        {"type": "FieldValue", "fieldValue": {"fieldPath": "a", "value": ""}},
                    )
                ],
            ),
        ),
        "at least 1 chars long",
        id="field-value-empty",
    ),
    pytest.param(
        (
            (
                PROBES,
                [
                    probe(
                        GROUP_KIND_SELECTOR,
                        {"type": "ConditionEqual", "conditionEqual": {"type": "Ready", "status": "Unknown"}},
                    )
                ],
            ),
        ),
        UNSUPPORTED,
        id="condition-equal-unknown-status",
    ),
    pytest.param(((PROBES, []),), "should have at least 1 items", id="probes-0"),
    pytest.param(
        ((PROBES, [probe(GROUP_KIND_SELECTOR)]),), "should have at least 1 items", id="assertions-0"
    ),
    pytest.param(
        ((PROBES, [probe(GROUP_KIND_SELECTOR, CONDITION_EQUAL)] * 21),),
        "must have at most 20 items",
        id="probes-21",
    ),
    pytest.param((("spec", DELETE),), "spec: Required value", id="spec-missing"),
]


@pytest.mark.parametrize(("changes", "expected"), CASES)
async def test_admission(
    objects: Objects,
    request: pytest.FixtureRequest,
    changes: tuple[tuple[str, Any], ...],
    expected: str | None,
) -> None:
    await objects.check(with_(cluster_object_set(unique_name(request)), *changes), expected)


async def test_embedded_objects_are_stored_verbatim(objects: Objects, request: pytest.FixtureRequest) -> None:
    unusual = {
        **configmap(),
        "metadata": {"name": "settings", "namespace": "my-app", "annotations": {"note": "kept"}},
        "someFutureField": {"nested": [1, "two", {"three": True}]},
    }
    body = with_(cluster_object_set(unique_name(request)), (f"{OBJ}.object", unusual))
    created = await objects.create(body)
    assert created["spec"]["phases"][0]["objects"][0]["object"] == unusual
