"""Typed access for pydantic models of custom resources.

A model declares its kind with a class variable and mirrors the object's JSON through field aliases:

    class Widget(pydantic.BaseModel):
        __gvk__: ClassVar[GroupVersionKind] = GroupVersionKind("example.com", "v1", "Widget")
        model_config = ConfigDict(populate_by_name=True, extra="allow")
        api_version: str = Field("example.com/v1", alias="apiVersion")
        kind: str = "Widget"
        metadata: dict[str, Any]
        spec: WidgetSpec

    widgets = client.typed(Widget)    # same as TypedClient(client, Widget)
    w = await widgets.get("w1", namespace="ns")

Each call equals the dict client's call with `model_dump(mode="json", by_alias=True,
exclude_none=True)` on the way in and `model_validate` on the way out; `apiVersion` and `kind` are
filled in from `__gvk__` when the dump lacks them. Fields the model does not declare are dropped on
the way out unless the model allows extra fields, and an update then removes them from the object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from olm_runtime.client.gvk import GroupVersionKind
from olm_runtime.client.options import PatchType, Preconditions, PropagationPolicy

if TYPE_CHECKING:
    from pydantic import BaseModel

    from olm_runtime.client.client import Client

__all__ = ["TypedClient", "dump", "gvk_of"]

M = TypeVar("M", bound="BaseModel")


def gvk_of(model: type[BaseModel]) -> GroupVersionKind:
    """The kind a model class declares in `__gvk__`."""
    gvk = getattr(model, "__gvk__", None)
    if not isinstance(gvk, GroupVersionKind):
        raise TypeError(f"{model.__name__} does not declare __gvk__: ClassVar[GroupVersionKind]")
    return gvk


def dump(obj: BaseModel) -> dict[str, Any]:
    """A model as the JSON dict the API server expects."""
    body: dict[str, Any] = obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    gvk = gvk_of(type(obj))
    body.setdefault("apiVersion", gvk.api_version)
    body.setdefault("kind", gvk.kind)
    return body


class TypedClient(Generic[M]):
    """The dict client's calls for one model class, taking and returning model instances."""

    def __init__(self, client: Client, model: type[M]) -> None:
        self.client = client
        self.model = model
        self.gvk = gvk_of(model)

    def _load(self, body: Mapping[str, Any]) -> M:
        return self.model.model_validate(body)

    async def get(self, name: str, *, namespace: str | None = None) -> M:
        return self._load(await self.client.get(self.gvk, name, namespace=namespace))

    async def list(
        self,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[M]:
        result = await self.client.list(
            self.gvk, namespace=namespace, label_selector=label_selector, field_selector=field_selector
        )
        return [self._load(item) for item in result.items]

    async def create(self, obj: M, *, dry_run: bool | None = None) -> M:
        return self._load(await self.client.create(dump(obj), dry_run=dry_run))

    async def update(self, obj: M, *, dry_run: bool | None = None) -> M:
        return self._load(await self.client.update(dump(obj), dry_run=dry_run))

    async def update_status(self, obj: M, *, dry_run: bool | None = None) -> M:
        return self._load(await self.client.update_status(dump(obj), dry_run=dry_run))

    async def apply(
        self, obj: M, *, field_manager: str | None = None, force: bool = False, dry_run: bool | None = None
    ) -> M:
        """Server-side apply of the fields set on `obj` (fields left None are not sent)."""
        body = await self.client.apply(dump(obj), field_manager=field_manager, force=force, dry_run=dry_run)
        return self._load(body)

    async def apply_status(
        self, obj: M, *, field_manager: str | None = None, force: bool = False, dry_run: bool | None = None
    ) -> M:
        body = await self.client.apply(
            dump(obj), field_manager=field_manager, force=force, subresource="status", dry_run=dry_run
        )
        return self._load(body)

    async def patch(
        self,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = PatchType.MERGE,
        subresource: str | None = None,
        dry_run: bool | None = None,
    ) -> M:
        body = await self.client.patch(
            self.gvk,
            name,
            patch,
            namespace=namespace,
            patch_type=patch_type,
            subresource=subresource,
            dry_run=dry_run,
        )
        return self._load(body)

    async def delete(
        self,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: PropagationPolicy | None = None,
        preconditions: Preconditions | None = None,
        dry_run: bool | None = None,
    ) -> None:
        await self.client.delete(
            self.gvk,
            name,
            namespace=namespace,
            propagation_policy=propagation_policy,
            preconditions=preconditions,
            dry_run=dry_run,
        )
