"""Models declare their kind; dumps carry apiVersion and kind and leave out unset fields."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from olm_runtime.client import GroupVersionKind
from olm_runtime.client.typed import dump, gvk_of

GADGET = GroupVersionKind("example.com", "v1alpha1", "Gadget")


class GadgetSpec(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    display_name: str | None = Field(None, alias="displayName")
    size: int = 1


class Gadget(BaseModel):
    __gvk__: ClassVar[GroupVersionKind] = GADGET
    metadata: dict[str, Any]
    spec: GadgetSpec


def test_dump_uses_aliases_fills_the_kind_and_drops_none() -> None:
    gadget = Gadget(metadata={"name": "g"}, spec=GadgetSpec(display_name="G"))
    assert dump(gadget) == {
        "apiVersion": "example.com/v1alpha1",
        "kind": "Gadget",
        "metadata": {"name": "g"},
        "spec": {"displayName": "G", "size": 1},
    }
    assert "displayName" not in dump(Gadget(metadata={"name": "g"}, spec=GadgetSpec()))["spec"]


def test_the_kind_comes_from_the_class_variable() -> None:
    assert gvk_of(Gadget) == GADGET
    assert "__gvk__" not in Gadget.model_fields


def test_a_model_without_gvk_is_rejected() -> None:
    class Plain(BaseModel):
        name: str

    with pytest.raises(TypeError, match="__gvk__"):
        gvk_of(Plain)
