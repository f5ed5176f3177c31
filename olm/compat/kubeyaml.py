"""YAML read the way Kubernetes reads it (sigs.k8s.io/yaml on go-yaml v2), using PyYAML.

PyYAML's safe loader implements YAML 1.1 more literally than Kubernetes does. Where they differ,
this loader follows Kubernetes, because catalogs and manifests are written and tested against it:

- a bare `=` is the string "=" (PyYAML resolves it to the `value` tag and then fails; the
  prometheus 0.56.3 alertmanagerconfigs CRD has one as an enum item);
- timestamps (`2024-01-02`) stay strings (go-yaml keeps them as strings in untyped values);
- `1:20` is a string, not sexagesimal 80;
- `y`, `Y`, `n`, `N` are booleans, as are `yes/no/on/off` in their three spellings;
- integers take Go's forms (`0x1F`, `0o17`, `017`, `0b101`, `1_000`);
- a float with an integral value is an integer once it has been through JSON (`1.0`, `1e3` -> 1),
  since sigs.k8s.io/yaml turns YAML into JSON with Go's encoder;
- `!!binary` values become base64 strings (what encoding/json makes of bytes);
- mapping keys become JSON strings (`1` -> "1", `true` -> "true", `1.0` -> "1"), converted before
  insertion so `1:` and `true:` stay distinct; a sequence or mapping as a key is an error;
- a document whose aliases expand it out of all proportion to its text (a "billion laughs") is
  an error, by go-yaml v2's rule, as is an anchor that holds an alias of itself.

`iter_documents` reads a stream one document at a time (catalogs can be large); `load_documents`
reads a whole manifest file, YAML or JSON. The parser is libyaml (`CSafeLoader`) when PyYAML was
built with it, the pure-Python loader otherwise.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Iterator
from typing import IO, Any, ClassVar

import orjson
import yaml

__all__ = ["KubernetesLoader", "ManifestYAMLError", "iter_documents", "load_documents", "loads"]

_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_INT = re.compile(
    r"""^[-+]?(?:0[xX][0-9a-fA-F_]+
        |0[oO][0-7_]+
        |0[bB][01_]+
        |0[0-7_]*
        |[1-9][0-9_]*)$""",
    re.X,
)
_FLOAT = re.compile(
    r"""^(?:[-+]?(?:\.[0-9_]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
    re.X,
)
_BOOL = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$"
)
_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})

_REPLACED_TAGS = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:value",
}


class ManifestYAMLError(ValueError):
    """A manifest file is not valid YAML or JSON."""


class KubernetesLoader(_BaseLoader):  # type: ignore[misc]
    """A safe loader whose implicit typing of plain scalars matches Kubernetes' YAML reader."""

    yaml_implicit_resolvers: ClassVar[dict[str | None, list[tuple[str, re.Pattern[str]]]]] = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in _REPLACED_TAGS]
        for first, resolvers in _BaseLoader.yaml_implicit_resolvers.items()
    }
    yaml_constructors: ClassVar[dict[str, Any]] = dict(_BaseLoader.yaml_constructors)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
        self.flatten_mapping(node)
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _json_key(self.construct_object(key_node, deep=deep), key_node)
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping

    aliased = False
    """Whether the document being built used an alias (then its expansion is checked)."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects:  # built before: this is an alias of it
            self.aliased = True
        return super().construct_object(node, deep=deep)

    def resolve(self, kind: type[yaml.Node], value: str, implicit: tuple[bool, bool]) -> str:
        # libyaml calls this for every node without an explicit tag. No path resolvers are
        # registered, so a scalar is one of the implicit tags (plain scalars only) or a string, and
        # a collection has its default tag: what `BaseResolver.resolve` finds too, minus its
        # per-call list building.
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in _PLAIN_RESOLVERS.get(value[:1], _WILDCARD_RESOLVERS):
                    if regexp.match(value):
                        return tag
            return _STR
        if kind is yaml.MappingNode:
            return _MAP
        if kind is yaml.SequenceNode:
            return _SEQ
        resolved: str = super().resolve(kind, value, implicit)
        return resolved

    def construct_document(self, node: yaml.Node) -> Any:
        try:
            return _build(self, node, set(), 0)
        except Exception:  # the general way builds it, or raises its own error
            pass
        self.aliased = False
        document = super().construct_document(node)
        if self.aliased:  # the (costly) count runs only for documents that use aliases
            _check_aliasing(node)
        return document


_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_FAST_DEPTH = 100
"""Nesting the fast constructor takes on; deeper documents go the general way, whose recursion
limit then applies exactly as before."""


class _Unusual(Exception):
    """The document needs the general constructor: an alias, a merge key, another tag, deep nesting.

    Any other error while building fast also hands the document to the general constructor, so
    a broken document fails with the error (and the place) it always failed with."""


def _build(loader: Any, node: yaml.Node, seen: set[int], depth: int) -> Any:
    """Build a plain document (no aliases, standard tags) straight from its nodes.

    Catalog and manifest documents are such documents; building them without the generic
    constructor's per-node bookkeeping (memo tables, generators, constructor lookup) takes a
    fraction of the time. The result is what the general constructor builds; anything it would
    treat specially raises `_Unusual`, and the caller builds the document the general way.
    """
    if id(node) in seen or depth > _FAST_DEPTH:
        raise _Unusual
    seen.add(id(node))
    tag, kind = node.tag, type(node)
    if kind is yaml.ScalarNode:
        if tag == _STR:
            return node.value
        scalar = _SCALARS.get(tag)
        if scalar is None:
            raise _Unusual
        return scalar(loader, node)
    if tag == _MAP and kind is yaml.MappingNode:
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                raise _Unusual
            key = _json_key(_build(loader, key_node, seen, depth + 1), key_node)
            mapping[key] = _build(loader, value_node, seen, depth + 1)
        return mapping
    if tag == _SEQ and kind is yaml.SequenceNode:
        return [_build(loader, child, seen, depth + 1) for child in node.value]
    raise _Unusual


# go-yaml v2's guard against "billion laughs" documents: once more than 100 nodes were decoded
# through aliases and more than 1000 in all, the share decoded through aliases may not pass this.
_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expanded_sizes(root: yaml.Node) -> dict[int, int]:
    """Each node's size with its aliases expanded, by `id`; iterative, as documents nest deeply."""
    sizes: dict[int, int] = {}
    pending = {id(root)}
    stack = [(root, iter(_children(root)))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            pending.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in _children(node))
        elif id(child) in pending:
            raise yaml.constructor.ConstructorError(
                None, None, "an anchor's value contains an alias of itself", child.start_mark
            )
        elif id(child) not in sizes:
            pending.add(id(child))
            stack.append((child, iter(_children(child))))
    return sizes


def _check_aliasing(root: yaml.Node) -> None:
    """Refuse a document whose aliases expand it out of all proportion to its text, the way
    go-yaml v2 counts: in document order, a node met again is an alias decoded in full."""
    sizes = _expanded_sizes(root)
    seen: set[int] = set()
    decoded = aliased = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            decoded += 1 + sizes[id(node)]
            aliased += sizes[id(node)]
            if aliased > 100 and decoded > 1000 and aliased / decoded > _allowed_alias_ratio(decoded):
                raise yaml.constructor.ConstructorError(
                    None, None, "document contains excessive aliasing", node.start_mark
                )
            continue
        seen.add(id(node))
        decoded += 1
        stack.extend(reversed(_children(node)))


def _json_number(value: float) -> float | int:
    """What a float becomes after Go's json.Marshal and an unstructured decode."""
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def _json_key(key: Any, node: yaml.Node) -> str:
    if isinstance(key, float):
        key = _json_number(key)
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int | float):
        return repr(key)
    if key is None:
        return "null"
    raise yaml.constructor.ConstructorError(
        None, None, f"a mapping key must be a scalar, found {type(key).__name__}", node.start_mark
    )


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits[:2].lower() in ("0b", "0o", "0x"):
        return sign * int(digits, 0)
    if len(digits) > 1 and digits.startswith("0"):
        return sign * int(digits, 8)
    return sign * int(digits)


def _construct_float(loader: Any, node: yaml.ScalarNode) -> float | int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    lowered = text.lower()
    if lowered.endswith(".inf"):
        value = -math.inf if text.startswith("-") else math.inf
    elif lowered == ".nan":
        value = math.nan
    else:
        value = float(text)
    return _json_number(value)


def _construct_bool(loader: Any, node: yaml.ScalarNode) -> bool:
    return str(loader.construct_scalar(node)) in _TRUE


def _construct_str(loader: Any, node: yaml.ScalarNode) -> str:
    return str(loader.construct_scalar(node))


def _construct_binary(loader: Any, node: yaml.ScalarNode) -> str:
    raw = "".join(str(loader.construct_scalar(node)).split())
    try:
        decoded = base64.b64decode(raw)
    except ValueError as error:  # binascii.Error: a YAML error like any other, with its place
        raise yaml.constructor.ConstructorError(
            None, None, f"failed to decode base64 data: {error}", node.start_mark
        ) from None
    return base64.b64encode(decoded).decode("ascii")


KubernetesLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("yYnNtTfFoO"))
KubernetesLoader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
KubernetesLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
_SCALARS: dict[str, Any] = {
    "tag:yaml.org,2002:int": _construct_int,
    "tag:yaml.org,2002:float": _construct_float,
    "tag:yaml.org,2002:bool": _construct_bool,
    "tag:yaml.org,2002:timestamp": _construct_str,
    "tag:yaml.org,2002:value": _construct_str,
    "tag:yaml.org,2002:binary": _construct_binary,
}
"""The scalar tags the fast constructor builds, with the constructors the loader registers."""
for _tag, _construct in _SCALARS.items():
    KubernetesLoader.add_constructor(_tag, _construct)
# Only the fast constructor uses this one: the base loader's also checks the node is a scalar.
_SCALARS["tag:yaml.org,2002:null"] = lambda loader, node: None
_MERGE = "tag:yaml.org,2002:merge"
_WILDCARD_RESOLVERS: list[tuple[str, re.Pattern[str]]] = KubernetesLoader.yaml_implicit_resolvers.get(
    None, []
)
_PLAIN_RESOLVERS = {
    first: resolvers + _WILDCARD_RESOLVERS
    for first, resolvers in KubernetesLoader.yaml_implicit_resolvers.items()
    if first is not None
}
"""The implicit resolvers by first character, each list ending with the wildcard ones."""


def iter_documents(stream: IO[bytes]) -> Iterator[tuple[int, Any]]:
    """Yield `(line, document)` for each document of a YAML stream, line counted from 1.

    Documents are read and built one at a time, so memory follows the largest document, not the
    stream. Empty documents (nothing but comments or `---`) are skipped.
    """
    loader = KubernetesLoader(stream)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            document = loader.construct_document(node)
            if document is not None:
                yield node.start_mark.line + 1, document
    finally:
        loader.dispose()


def loads(text: str | bytes) -> Any:
    """One YAML document, read with Kubernetes semantics (`None` for an empty one)."""
    return yaml.load(text, Loader=KubernetesLoader)


def load_documents(text: str | bytes, source: str = "<manifest>") -> list[Any]:
    """The non-empty documents of a manifest file: a YAML stream, or one JSON value.

    A file whose first character is `{` or `[` is read as JSON when it is one JSON value; anything
    else (YAML flow style, a stream of JSON objects) is read as YAML, which covers both.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [orjson.loads(stripped)]
        except orjson.JSONDecodeError:
            pass
    try:
        return [doc for doc in yaml.load_all(text, Loader=KubernetesLoader) if doc is not None]
    except yaml.YAMLError as err:
        raise ManifestYAMLError(f"error parsing {source}: {err}") from err
