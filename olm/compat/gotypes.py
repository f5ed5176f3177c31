"""Go struct round trips: what a Kubernetes object looks like after Go decodes and re-encodes it.

Upstream OLM reads a bundle's CSV and CRDs into typed Go structs and renders typed objects, so its
output is normalised the way `encoding/json` normalises: unknown fields vanish, empty `omitempty`
fields vanish, non-pointer structs always appear (`resources: {}`, `strategy: {}`, `status: {}`),
nil slices without `omitempty` appear as `null`, quantities become canonical (`2000m` -> `2`).
To render the same objects, a type is described here as data (`Struct`, `Ptr`, `Slice`, `Map`,
`Scalar`, `Raw`, ...) and `roundtrip(type, value)` applies those rules to a plain value.

`Raw` marks a subtree kept verbatim: where the tables stop modelling Go types, values pass through
unchanged (documented infidelity: empty fields inside such subtrees are not dropped).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from olm.compat import quantity

__all__ = [
    "MISSING",
    "Field",
    "GoType",
    "GoTypeError",
    "IntOrString",
    "Lazy",
    "Map",
    "Ptr",
    "Quantity",
    "Raw",
    "Scalar",
    "SchemaOr",
    "Slice",
    "Struct",
    "Time",
    "roundtrip",
]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""Returned by `GoType.encode` when the field is omitted from the encoded object."""


class GoTypeError(ValueError):
    """A value cannot be decoded into the Go type (wrong JSON type); `path` says where."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path or '.'}: {message}")
        self.path = path


_JSON_NAMES = {str: "string", bool: "boolean", int: "number", float: "number", list: "array", dict: "object"}


def _kind(value: Any) -> str:
    return "null" if value is None else _JSON_NAMES.get(type(value), type(value).__name__)


class GoType:
    """A Go type: `encode` turns a decoded JSON value (or MISSING) into the re-encoded JSON value."""

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Scalar(GoType):
    """string, bool, int or float; the zero value is omitted under omitempty."""

    kind: str

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        zero: Any = {"string": "", "bool": False, "int": 0, "float": 0}[self.kind]
        if value is MISSING or value is None:
            return MISSING if omitempty else zero
        ok = {
            "string": isinstance(value, str),
            "bool": isinstance(value, bool),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, int | float) and not isinstance(value, bool),
        }[self.kind]
        if not ok:
            want = {"string": "string", "bool": "boolean", "int": "integer", "float": "number"}[self.kind]
            raise GoTypeError(path, f"cannot decode {_kind(value)} into {want}")
        if self.kind == "float" and math.isfinite(value) and float(value).is_integer():
            value = int(value)
        if omitempty and value == zero and type(value) is type(zero):
            return MISSING
        return value


@dataclass(frozen=True)
class Raw(GoType):
    """Any JSON, kept verbatim (interface{}, json.RawMessage, or an unmodelled subtree)."""

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        if value is MISSING or value is None:
            return MISSING if omitempty else None
        return value


@dataclass(frozen=True)
class Ptr(GoType):
    """A pointer: nil when absent or null, otherwise the element, even when it is a zero value."""

    elem: GoType

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        if value is MISSING or value is None:
            return MISSING if omitempty else None
        return self.elem.encode(value, path, False)


@dataclass(frozen=True)
class _Collection(GoType):
    """A slice or a map: nil when absent or null, dropped when empty under omitempty."""

    elem: GoType
    json_type: ClassVar[type]

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        if value is MISSING or value is None:
            return MISSING if omitempty else None
        if not isinstance(value, self.json_type):
            raise GoTypeError(path, f"cannot decode {_kind(value)} into {_JSON_NAMES[self.json_type]}")
        if omitempty and not value:
            return MISSING
        return self.encode_elements(value, path)

    def encode_elements(self, value: Any, path: str) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Slice(_Collection):
    json_type = list

    def encode_elements(self, value: list[Any], path: str) -> list[Any]:
        return [self.elem.encode(v, f"{path}[{i}]", False) for i, v in enumerate(value)]


@dataclass(frozen=True)
class Map(_Collection):
    json_type = dict

    def encode_elements(self, value: dict[str, Any], path: str) -> dict[str, Any]:
        return {k: self.elem.encode(v, f"{path}.{k}", False) for k, v in value.items()}


@dataclass(frozen=True)
class Field:
    type: GoType
    omitempty: bool = True


@dataclass(frozen=True)
class Struct(GoType):
    """A Go struct: unknown keys dropped, fields in declaration order, always encoded (omitempty
    never drops a struct)."""

    fields: Mapping[str, Field] = field(default_factory=dict)

    @functools.cached_property
    def _always(self) -> tuple[tuple[str, Field], ...]:
        return tuple((name, spec) for name, spec in self.fields.items() if not spec.omitempty)

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        if value is MISSING or value is None:
            value = {}
        if not isinstance(value, dict):
            raise GoTypeError(path, f"cannot decode {_kind(value)} into object")
        out: dict[str, Any] = {}
        fields = self.fields
        for name, item in value.items():
            spec = fields.get(name)
            if spec is not None:
                encoded = spec.type.encode(item, f"{path}.{name}", spec.omitempty)
                if encoded is not MISSING:
                    out[name] = encoded
        for name, spec in self._always:
            if name not in value:
                out[name] = spec.type.encode(MISSING, f"{path}.{name}", False)
        # Go encodes fields in declaration order; hashes of encoded values depend on it.
        return {name: out[name] for name in fields if name in out}


@dataclass(frozen=True)
class Lazy(GoType):
    """A forward reference, for recursive types (JSONSchemaProps)."""

    resolve: Callable[[], GoType]

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        return self.resolve().encode(value, path, omitempty)


@dataclass(frozen=True)
class SchemaOr(GoType):
    """JSONSchemaPropsOrBool / JSONSchemaPropsOrArray: a schema, or a bool / a list of schemas."""

    schema: GoType
    alternative: str  # "bool" or "array"

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        if value is MISSING or value is None:
            return MISSING if omitempty else None
        if self.alternative == "bool" and isinstance(value, bool):
            return value
        if self.alternative == "array" and isinstance(value, list):
            return [self.schema.encode(v, f"{path}[{i}]", False) for i, v in enumerate(value)]
        return self.schema.encode(value, path, False)


@dataclass(frozen=True)
class Quantity(GoType):
    """resource.Quantity: canonical string form; a missing non-pointer quantity encodes as "0"."""

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        if value is MISSING or value is None:
            return "0"
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise GoTypeError(path, f"cannot decode {_kind(value)} into quantity")
        try:
            return quantity.canonical(str(value) if not isinstance(value, float) else repr(value))
        except ValueError as err:
            raise GoTypeError(path, str(err)) from err


@dataclass(frozen=True)
class IntOrString(GoType):
    """intstr.IntOrString: kept as given; a missing non-pointer value encodes as 0."""

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        if value is MISSING or value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise GoTypeError(path, f"cannot decode {_kind(value)} into int or string")
        return value


@dataclass(frozen=True)
class Time(GoType):
    """metav1.Time with `omitzero` (Kubernetes 1.34+): dropped when null, kept otherwise."""

    def encode(self, value: Any, path: str, omitempty: bool) -> Any:
        return MISSING if value is MISSING or value is None else value


def roundtrip(go_type: GoType, value: Any, path: str = "") -> Any:
    """Decode `value` into `go_type` and encode it again, as Go's encoding/json would."""
    return go_type.encode(value, path, False)
