"""Typed views of the four schemas OLM knows; every other schema stays an opaque meta.

Views are read-only pydantic models parsed from a meta's blob on demand. Unknown fields are kept
(`extra="allow"`) so a view never loses what a newer catalog adds; property values stay untyped
JSON because property types are open-ended.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from olm.fbc._meta import SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE, Meta

PROPERTY_PACKAGE = "olm.package"
"""The bundle property carrying `{packageName, version}`."""


class _View(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow", populate_by_name=True)


class Property(_View):
    type: str
    value: Any = None


class Icon(_View):
    base64data: str = ""
    mediatype: str = ""


class Package(_View):
    schema_: Literal["olm.package"] = Field(alias="schema")
    name: str
    default_channel: str = Field(default="", alias="defaultChannel")
    description: str = ""
    icon: Icon | None = None
    properties: tuple[Property, ...] = ()


class ChannelEntry(_View):
    name: str
    replaces: str = ""
    skips: tuple[str, ...] = ()
    skip_range: str = Field(default="", alias="skipRange")


class Channel(_View):
    schema_: Literal["olm.channel"] = Field(alias="schema")
    name: str
    package: str
    entries: tuple[ChannelEntry, ...] = ()
    properties: tuple[Property, ...] = ()


class RelatedImage(_View):
    name: str = ""
    image: str


class Bundle(_View):
    schema_: Literal["olm.bundle"] = Field(alias="schema")
    name: str
    package: str
    image: str = ""
    properties: tuple[Property, ...] = ()
    related_images: tuple[RelatedImage, ...] = Field(default=(), alias="relatedImages")

    def properties_of(self, type_: str) -> list[Any]:
        """The values of every property of type `type_`, in order."""
        return [p.value for p in self.properties if p.type == type_]

    @property
    def version(self) -> str | None:
        """The `version` of the single `olm.package` property, if there is exactly one."""
        values = self.properties_of(PROPERTY_PACKAGE)
        if len(values) != 1 or not isinstance(values[0], dict):
            return None
        version = values[0].get("version")
        return version if isinstance(version, str) else None


class DeprecationReference(_View):
    schema_: Literal["olm.package", "olm.channel", "olm.bundle"] = Field(alias="schema")
    name: str = ""


class DeprecationEntry(_View):
    reference: DeprecationReference
    message: str


class Deprecations(_View):
    schema_: Literal["olm.deprecations"] = Field(alias="schema")
    package: str
    entries: tuple[DeprecationEntry, ...] = ()


View = Package | Channel | Bundle | Deprecations

_VIEWS: dict[str, type[Package] | type[Channel] | type[Bundle] | type[Deprecations]] = {
    SCHEMA_PACKAGE: Package,
    SCHEMA_CHANNEL: Channel,
    SCHEMA_BUNDLE: Bundle,
    SCHEMA_DEPRECATIONS: Deprecations,
}


def view(meta: Meta) -> View | None:
    """The typed view of `meta`, or `None` for a schema OLM does not interpret.

    Raises `pydantic.ValidationError` when a known schema's object has the wrong shape.
    """
    model = _VIEWS.get(meta.schema)
    if model is None:
        return None
    return model.model_validate_json(meta.blob)
