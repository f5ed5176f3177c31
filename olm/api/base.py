"""Base classes: the model configuration every type shares, object metadata and resources.

`Model` fixes the wire conventions once: Python attributes are snake_case, the JSON is the
camelCase Kubernetes uses, both spellings are accepted on input and the camelCase one is written.
Field doc strings become schema descriptions, so every field documents itself in `kubectl explain`.

`Resource` is a whole object (apiVersion, kind, metadata, spec, status). `from_dict` reads the
plain dicts the informer cache holds; `to_dict` writes the JSON shape the API server accepts.
Nested fields the model does not know are dropped on read (the API server prunes them anyway);
top-level and metadata fields it does not know, such as `metadata.managedFields`, are kept, so a
read-modify-write round trip loses nothing the server stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from olm.api import names

__all__ = ["Model", "ObjectMeta", "OwnerReference", "PrinterColumn", "Resource", "ResourceInfo"]


class Model(BaseModel):
    """Base of every API type: camelCase on the wire, snake_case in Python, doc strings as docs."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        use_attribute_docstrings=True,
        extra="ignore",
    )


class OwnerReference(Model):
    """An object this object depends on; garbage collection deletes this one when the owner goes."""

    model_config = ConfigDict(extra="allow")

    api_version: str
    """API version of the owner."""
    kind: str
    """Kind of the owner."""
    name: str
    """Name of the owner."""
    uid: str
    """UID of the owner; a recreated owner with the same name is a different owner."""
    controller: bool | None = None
    """True on the single owner that manages this object."""
    block_owner_deletion: bool | None = None
    """True to keep the owner from being deleted in the foreground until this object is gone."""


class ObjectMeta(Model):
    """Standard Kubernetes object metadata; fields not listed here are kept as they are."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    """Unique name of a cluster-scoped object."""
    generate_name: str | None = None
    """Prefix the API server completes into a unique name when `name` is empty."""
    uid: str | None = None
    """Identity assigned by the API server."""
    resource_version: str | None = None
    """Opaque version used for optimistic concurrency on updates."""
    generation: int | None = None
    """Incremented by the API server on every change of `spec`."""
    creation_timestamp: datetime | None = None
    """When the object was created."""
    deletion_timestamp: datetime | None = None
    """Set when deletion was requested; finalizers still hold the object."""
    labels: dict[str, str] | None = None
    """Identifying key/value pairs that selectors match."""
    annotations: dict[str, str] | None = None
    """Non-identifying key/value pairs for tools."""
    finalizers: list[str] | None = None
    """Names of the clean-up steps that must finish before the object is deleted."""
    owner_references: list[OwnerReference] | None = None
    """Objects this object depends on."""


@dataclass(frozen=True, kw_only=True)
class PrinterColumn:
    """A column of `kubectl get` output."""

    name: str
    json_path: str
    type: Literal["string", "integer", "number", "boolean", "date"] = "string"
    description: str | None = None
    priority: int = 0
    """0 for `kubectl get`; 1 only for `kubectl get -o wide`."""


@dataclass(frozen=True, kw_only=True)
class ResourceInfo:
    """How a kind is served: its names, scope and `kubectl get` columns."""

    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = (names.CATEGORY,)
    printer_columns: tuple[PrinterColumn, ...] = ()
    group: str = names.GROUP
    versions: tuple[str, ...] = (names.VERSION,)
    """The versions served, all with the same schema; the first is the one stored."""
    namespaced: bool = False

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"


def condition_status_column(name: str) -> PrinterColumn:
    """A column showing the status (True/False/Unknown) of the condition of type `name`."""
    return PrinterColumn(name=name, json_path=f".status.conditions[?(@.type=='{name}')].status")


AGE_COLUMN = PrinterColumn(name="Age", json_path=".metadata.creationTimestamp", type="date")


class Resource(Model):
    """A whole API object. Subclasses set `info` and narrow `kind`, `spec` and `status`."""

    model_config = ConfigDict(extra="allow")
    info: ClassVar[ResourceInfo]

    api_version: str = names.API_VERSION
    """Versioned schema of this representation of the object."""
    kind: str
    """Kind of the object."""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    """Standard object metadata."""

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> Self:
        """Read an object as the API server or the informer cache returns it."""
        return cls.model_validate(obj)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict the API server accepts; unset optional fields are left out."""
        return self.model_dump(mode="json", exclude_none=True)
