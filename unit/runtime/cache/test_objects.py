"""Cached objects: managedFields stripped, private copies on request, optional deep freezing."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import orjson
import pytest

from olm_runtime import cache
from olm_runtime.cache import _objects
from unit.runtime.cache.fakes import cm


def test_the_default_transform_drops_managed_fields_only() -> None:
    obj = cm("a", 1, labels={"x": "y"}, key="value")
    out = cache.strip_managed_fields(obj)
    assert "managedFields" not in out["metadata"]
    assert out["metadata"]["labels"] == {"x": "y"}
    assert out["data"] == {"key": "value"}
    assert cache.strip_managed_fields({"kind": "Weird"}) == {"kind": "Weird"}


def test_mutable_copy_is_deep_and_independent() -> None:
    original = cm("a", 1, labels={"x": "y"})
    mine = cache.mutable_copy(original)
    mine["metadata"]["labels"]["x"] = "changed"
    assert original["metadata"]["labels"]["x"] == "y"


def frozen_sample() -> Any:
    return _objects.freeze(
        {"metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"items": [{"n": 1}, 2]}}
    )


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(lambda o: o.__setitem__("kind", "X"), id="set-top-level"),
        pytest.param(lambda o: o["metadata"]["labels"].update(z="1"), id="update-nested"),
        pytest.param(lambda o: o["metadata"].pop("name"), id="pop"),
        pytest.param(lambda o: o["spec"]["items"].append(3), id="append-to-list"),
        pytest.param(lambda o: o["spec"]["items"][0].clear(), id="clear-dict-in-list"),
        pytest.param(lambda o: o["spec"]["items"].__setitem__(1, 5), id="set-list-item"),
        pytest.param(lambda o: o.setdefault("status", {}), id="setdefault"),
    ],
)
def test_frozen_objects_refuse_every_write(mutate: Any) -> None:
    obj = frozen_sample()
    with pytest.raises(TypeError, match="read-only"):
        mutate(obj)


def test_frozen_objects_still_behave_like_json_data() -> None:
    plain = {"metadata": {"name": "a"}, "spec": {"items": [1, {"b": 2}]}}
    frozen = _objects.freeze(plain)
    assert frozen == plain
    assert isinstance(frozen, dict)
    assert isinstance(frozen["spec"]["items"], list)
    assert frozen["spec"]["items"] == [1, {"b": 2}]
    assert orjson.loads(orjson.dumps(frozen)) == plain
    for thawed in (copy.deepcopy(frozen), cache.mutable_copy(frozen), pickle.loads(pickle.dumps(frozen))):
        assert type(thawed) is dict
        thawed["spec"]["items"].append(3)  # a private copy is writable
    assert frozen["spec"]["items"] == [1, {"b": 2}]
