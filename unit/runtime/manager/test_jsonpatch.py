"""The webhook's JSON patch: applying `json_patch(a, b)` to `a` gives exactly `b`, for any JSON."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olm_runtime.manager import webhook
from olm_runtime.manager.webhook._jsonpatch import same

KEYS = st.sampled_from(["a", "b", "c", "x/y", "~t", "", "0", "-"])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", "v", "w"]),
)
JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(KEYS, children, max_size=4)),
    max_leaves=20,
)


@settings(max_examples=500)
@given(original=JSON, mutated=JSON)
def test_applying_the_diff_to_the_original_gives_the_mutated_document(original: Any, mutated: Any) -> None:
    patch = webhook.json_patch(original, mutated)
    assert same(webhook.apply_patch(original, patch), mutated)


@settings(max_examples=200)
@given(original=JSON, mutated=JSON)
def test_the_patch_survives_a_trip_through_json(original: Any, mutated: Any) -> None:
    patch = orjson.loads(orjson.dumps(webhook.json_patch(original, mutated)))
    assert same(webhook.apply_patch(original, patch), mutated)


@given(document=JSON)
def test_identical_documents_give_an_empty_patch(document: Any) -> None:
    assert webhook.json_patch(document, orjson.loads(orjson.dumps(document))) == []


@pytest.mark.parametrize(
    ("original", "mutated", "patch"),
    [
        pytest.param(
            {"metadata": {}},
            {"metadata": {"labels": {"a": "1"}}},
            [{"op": "add", "path": "/metadata/labels", "value": {"a": "1"}}],
            id="add-a-missing-map",
        ),
        pytest.param({"a": 1, "b": 2}, {"a": 1}, [{"op": "remove", "path": "/b"}], id="remove-a-key"),
        pytest.param(
            {"a": 1}, {"a": True}, [{"op": "replace", "path": "/a", "value": True}], id="int-to-bool"
        ),
        pytest.param(
            {"a": 1}, {"a": 1.0}, [{"op": "replace", "path": "/a", "value": 1.0}], id="int-to-float"
        ),
        pytest.param(
            {"k/v": {"t~": 1}},
            {"k/v": {"t~": 2}},
            [{"op": "replace", "path": "/k~1v/t~0", "value": 2}],
            id="keys-are-escaped",
        ),
        pytest.param(
            [1, 2, 3],
            [1],
            [{"op": "remove", "path": "/2"}, {"op": "remove", "path": "/1"}],
            id="list-shrinks-from-the-end",
        ),
        pytest.param(
            [1],
            [1, 2, 3],
            [{"op": "add", "path": "/1", "value": 2}, {"op": "add", "path": "/2", "value": 3}],
            id="list-grows-at-the-end",
        ),
        pytest.param({"a": 1}, [1], [{"op": "replace", "path": "", "value": [1]}], id="whole-document"),
    ],
)
def test_diff_cases(original: Any, mutated: Any, patch: list[dict[str, Any]]) -> None:
    assert webhook.json_patch(original, mutated) == patch


def test_the_diff_does_not_share_values_with_the_mutated_document() -> None:
    mutated = {"spec": {"items": [1]}}
    patch = webhook.json_patch({}, mutated)
    mutated["spec"]["items"].append(2)
    assert patch == [{"op": "add", "path": "/spec", "value": {"items": [1]}}]


@pytest.mark.parametrize(
    ("document", "patch", "result"),
    [
        pytest.param(
            {"a": [1, 2]}, [{"op": "add", "path": "/a/-", "value": 3}], {"a": [1, 2, 3]}, id="append"
        ),
        pytest.param(
            {"a": [1, 2]}, [{"op": "add", "path": "/a/0", "value": 0}], {"a": [0, 1, 2]}, id="insert"
        ),
        pytest.param(
            {"a": {"b": 1}}, [{"op": "move", "from": "/a/b", "path": "/c"}], {"a": {}, "c": 1}, id="move"
        ),
        pytest.param(
            {"a": [1]}, [{"op": "copy", "from": "/a/0", "path": "/b"}], {"a": [1], "b": 1}, id="copy"
        ),
        pytest.param({"a": 1}, [{"op": "test", "path": "/a", "value": 1}], {"a": 1}, id="test-passes"),
    ],
)
def test_apply_cases(document: Any, patch: list[dict[str, Any]], result: Any) -> None:
    assert webhook.apply_patch(document, patch) == result


@pytest.mark.parametrize(
    ("document", "patch"),
    [
        pytest.param({"a": 1}, [{"op": "test", "path": "/a", "value": True}], id="test-keeps-types-apart"),
        pytest.param({"a": 1}, [{"op": "remove", "path": "/b"}], id="remove-missing"),
        pytest.param({"a": 1}, [{"op": "replace", "path": "/b", "value": 2}], id="replace-missing"),
        pytest.param({"a": [1]}, [{"op": "add", "path": "/a/2", "value": 2}], id="index-past-the-end"),
        pytest.param({"a": [1]}, [{"op": "add", "path": "/a/01", "value": 2}], id="leading-zero-index"),
        pytest.param({"a": {}}, [{"op": "move", "from": "/a", "path": "/a/b"}], id="move-into-itself"),
        pytest.param({}, [{"op": "frobnicate", "path": "/a"}], id="unknown-operation"),
        pytest.param({}, [{"op": "add", "path": "a", "value": 1}], id="pointer-without-slash"),
    ],
)
def test_apply_rejects(document: Any, patch: list[dict[str, Any]]) -> None:
    with pytest.raises(webhook.PatchError):
        webhook.apply_patch(document, patch)


def test_apply_leaves_the_input_untouched() -> None:
    document = {"a": [1]}
    webhook.apply_patch(document, [{"op": "add", "path": "/a/-", "value": 2}])
    assert document == {"a": [1]}
