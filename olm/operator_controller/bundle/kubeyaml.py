"""YAML and JSON manifests read the way Kubernetes reads them (sigs.k8s.io/yaml on go-yaml v2).

PyYAML's safe loader follows YAML 1.1 more literally than Kubernetes does, and the differences
change what a bundle means:

- a bare `=` is the YAML 1.1 `value` tag, which PyYAML rejects; Kubernetes reads the string "="
  (the prometheus 0.56.3 alertmanagerconfigs CRD has one as an enum item);
- timestamps (`2024-01-02`) stay strings instead of becoming `datetime` objects;
- sexagesimal numbers (`1:20`) stay strings instead of becoming 80;
- `y`, `Y`, `n` and `N` are booleans, as are `yes/no/on/off` in their three spellings;
- integers take Go's forms (`0x1F`, `0o17`, `017`, `0b101`, `1_000`);
- a float with an integral value is an integer once it has been through JSON (`1.0` -> 1);
- mapping keys are strings (`true:` -> "true", `1:` -> "1").

`load_documents` returns the non-empty documents of a multi-document stream; a JSON document (first
character `{` or `[`) is read as JSON. `KubeLoader` is the PyYAML loader class, swappable for a
different YAML library behind the same function.
"""

from __future__ import annotations

import base64
import math
import re
from typing import Any

import orjson
import yaml

__all__ = ["KubeLoader", "ManifestYAMLError", "load_documents"]

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ManifestYAMLError(ValueError):
    """A manifest file is not valid YAML or JSON."""


class KubeLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """A safe loader whose implicit typing matches go-yaml v2 as used by Kubernetes."""

    yaml_implicit_resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}  # noqa: RUF012


def _resolver(tag: str, pattern: str, first: str) -> None:
    KubeLoader.add_implicit_resolver(tag, re.compile(pattern, re.X), list(first))


_resolver(
    "tag:yaml.org,2002:bool",
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$",
    "yYnNtTfFoO",
)
KubeLoader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_resolver(
    "tag:yaml.org,2002:int",
    r"""^[-+]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|0[0-7_]*|[1-9][0-9_]*)$""",
    "-+0123456789",
)
_resolver(
    "tag:yaml.org,2002:float",
    r"""^(?:[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$""",
    "-+.0123456789",
)
KubeLoader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])

_BOOLS = {"y", "yes", "true", "on"}


def _construct_bool(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)).lower() in _BOOLS


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    lowered = digits.lower()
    if lowered.startswith(("0x", "0o", "0b")):
        return sign * int(digits, 0)
    if len(digits) > 1 and digits.startswith("0"):
        return sign * int(digits, 8)
    return sign * int(digits)


def _construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float | int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    lowered = text.lower()
    if lowered.endswith(".inf"):
        value = -math.inf if text.startswith("-") else math.inf
    elif lowered == ".nan":
        value = math.nan
    else:
        value = float(text)
    return _json_number(value)


def _json_number(value: float) -> float | int:
    """What a float becomes after Go's json.Marshal and an unstructured decode."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def _construct_string_scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


def _construct_map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Any:
    """Mappings with string keys, converted before insertion so `1:` and `true:` never collide."""
    data: dict[str, Any] = {}
    yield data
    loader.flatten_mapping(node)
    for key_node, value_node in node.value:
        key = _key(loader.construct_object(key_node, deep=True))
        data[key] = loader.construct_object(value_node, deep=True)


KubeLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
KubeLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
KubeLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
KubeLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
KubeLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_string_scalar)
KubeLoader.add_constructor("tag:yaml.org,2002:value", _construct_string_scalar)


def load_documents(text: str | bytes, source: str = "<manifest>") -> list[Any]:
    """Parse a YAML (multi-document) or JSON stream into plain JSON-compatible values."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [orjson.loads(stripped)]
        except orjson.JSONDecodeError:
            pass  # not a single JSON value: YAML flow style or a JSON stream; YAML reads both
    try:
        documents = list(yaml.load_all(text, Loader=KubeLoader))
    except yaml.YAMLError as err:
        raise ManifestYAMLError(f"error parsing {source}: {err}") from err
    return [_jsonable(doc) for doc in documents if doc is not None]


def _jsonable(value: Any) -> Any:
    """Make explicitly tagged oddities (`!!binary`, `!!set`) JSON values as Kubernetes would."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return value


def _key(key: Any) -> str:
    if isinstance(key, float):
        key = _json_number(key)
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)
