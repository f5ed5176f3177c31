"""Typed access: a pydantic model of a custom resource, declaring its kind with `__gvk__`."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from olm_runtime.client import Client, GroupVersionKind, TypedClient, errors


class WidgetSpec(BaseModel):
    size: int
    color: str | None = None
    tags: list[str] | None = None


class WidgetStatus(BaseModel):
    phase: str | None = None
    observed: int | None = None


def widget_model(gvk: GroupVersionKind) -> type[BaseModel]:
    """A Widget model bound to the test's own CRD group."""

    class Widget(BaseModel):
        __gvk__: ClassVar[GroupVersionKind] = gvk
        model_config = ConfigDict(populate_by_name=True)

        api_version: str = Field(gvk.api_version, alias="apiVersion")
        kind: str = gvk.kind
        metadata: dict[str, Any]
        spec: WidgetSpec | None = None
        status: WidgetStatus | None = None

    return Widget


async def test_typed_client_round_trips_models(
    client: Client, namespace: str, widget: GroupVersionKind
) -> None:
    model: Any = widget_model(widget)
    widgets: TypedClient[Any] = client.typed(model)

    created = await widgets.create(
        model(metadata={"name": "w1", "namespace": namespace}, spec=WidgetSpec(size=2, color="red"))
    )
    assert isinstance(created, model)
    assert created.spec == WidgetSpec(size=2, color="red")
    assert created.metadata["uid"]

    fetched = await widgets.get("w1", namespace=namespace)
    fetched.spec.size = 3
    updated = await widgets.update(fetched)
    assert updated.spec.size == 3

    updated.status = WidgetStatus(phase="Ready", observed=3)
    with_status = await widgets.update_status(updated)
    assert with_status.status == WidgetStatus(phase="Ready", observed=3)

    listed = await widgets.list(namespace=namespace)
    assert [w.metadata["name"] for w in listed] == ["w1"]

    patched = await widgets.patch("w1", {"spec": {"tags": ["a"]}}, namespace=namespace)
    assert patched.spec.tags == ["a"]

    await widgets.delete("w1", namespace=namespace)
    with pytest.raises(errors.NotFound):
        await widgets.get("w1", namespace=namespace)


async def test_typed_apply_sends_only_the_fields_set(
    client: Client, namespace: str, widget: GroupVersionKind
) -> None:
    model: Any = widget_model(widget)
    widgets: TypedClient[Any] = client.typed(model)
    await widgets.apply(
        model(metadata={"name": "w2", "namespace": namespace}, spec=WidgetSpec(size=1, color="blue")),
        field_manager="painter",
    )
    # The sizer applies only spec.size; the painter's color is someone else's field and stays.
    resized = await widgets.apply(
        model(metadata={"name": "w2", "namespace": namespace}, spec=WidgetSpec(size=5)),
        field_manager="sizer",
        force=True,
    )
    assert resized.spec == WidgetSpec(size=5, color="blue")

    status = await widgets.apply_status(
        model(metadata={"name": "w2", "namespace": namespace}, status=WidgetStatus(phase="Sized")),
        field_manager="sizer",
    )
    assert status.status.phase == "Sized"
