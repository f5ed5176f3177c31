"""RFC 6902 JSON patches between two JSON documents, and applying them.

`diff(original, mutated)` returns operations that turn `original` into `mutated`. It walks both
documents together: a map key only one side has becomes `add` or `remove`; a value of another type,
or a different scalar, becomes `replace`; maps and lists that both sides have are compared member by
member. Lists are compared by position (the common length member by member, then trailing `add`s or
`remove`s from the highest index down), so inserting at the front of a long list costs one operation
per member; the patch is still correct, only longer than a minimal one.

Equality is JSON equality with types kept apart: `1`, `1.0` and `True` are three different values
here (Python calls them equal), so changing one into another produces a `replace`.

`apply(document, patch)` is a strict implementation of the six operations, used to check `diff` and
useful in tests of mutating webhooks.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PatchError", "apply", "diff", "escape"]

Operation = dict[str, Any]


class PatchError(ValueError):
    """A patch operation could not be applied (missing path, failed test, bad operation)."""


def escape(token: str) -> str:
    """One reference token of a JSON pointer (RFC 6901): `~` becomes `~0`, `/` becomes `~1`."""
    return token.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def same(a: Any, b: Any) -> bool:
    """JSON equality that does not confuse booleans, integers and floats."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def diff(original: Any, mutated: Any) -> list[Operation]:
    """Operations that turn `original` into `mutated` (both plain JSON: dicts, lists, scalars)."""
    operations: list[Operation] = []
    _diff(original, mutated, "", operations)
    return operations


def _diff(original: Any, mutated: Any, path: str, out: list[Operation]) -> None:
    if same(original, mutated):
        return
    if isinstance(original, dict) and isinstance(mutated, dict):
        for key in original:
            if key not in mutated:
                out.append({"op": "remove", "path": f"{path}/{escape(key)}"})
        for key, value in mutated.items():
            if key in original:
                _diff(original[key], value, f"{path}/{escape(key)}", out)
            else:
                out.append({"op": "add", "path": f"{path}/{escape(key)}", "value": copy.deepcopy(value)})
        return
    if isinstance(original, list) and isinstance(mutated, list):
        common = min(len(original), len(mutated))
        for index in range(common):
            _diff(original[index], mutated[index], f"{path}/{index}", out)
        for index in range(len(original) - 1, common - 1, -1):
            out.append({"op": "remove", "path": f"{path}/{index}"})
        for index in range(common, len(mutated)):
            out.append({"op": "add", "path": f"{path}/{index}", "value": copy.deepcopy(mutated[index])})
        return
    out.append({"op": "replace", "path": path, "value": copy.deepcopy(mutated)})


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PatchError(f"a JSON pointer starts with '/': {pointer!r}")
    return [_unescape(token) for token in pointer[1:].split("/")]


def _index(container: list[Any], token: str, *, insert: bool) -> int:
    if token == "-" and insert:
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise PatchError(f"not an array index: {token!r}")
    index = int(token)
    if index > len(container) or (index == len(container) and not insert):
        raise PatchError(f"array index {index} out of range (length {len(container)})")
    return index


def _child(container: Any, token: str) -> Any:
    if isinstance(container, dict):
        if token not in container:
            raise PatchError(f"no member {token!r}")
        return container[token]
    if isinstance(container, list):
        return container[_index(container, token, insert=False)]
    raise PatchError(f"cannot descend into a {type(container).__name__} with {token!r}")


def _get(document: Any, pointer: str) -> Any:
    for token in _tokens(pointer):
        document = _child(document, token)
    return document


def _parent(document: Any, pointer: str) -> tuple[Any, str]:
    tokens = _tokens(pointer)
    if not tokens:
        raise PatchError("the operation needs a member path, not the whole document")
    for token in tokens[:-1]:
        document = _child(document, token)
    return document, tokens[-1]


def _add(document: Any, pointer: str, value: Any) -> Any:
    if pointer == "":
        return value
    parent, token = _parent(document, pointer)
    if isinstance(parent, dict):
        parent[token] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, token, insert=True), value)
    else:
        raise PatchError(f"cannot add to a {type(parent).__name__} at {pointer!r}")
    return document


def _remove(document: Any, pointer: str) -> tuple[Any, Any]:
    parent, token = _parent(document, pointer)
    if isinstance(parent, dict):
        if token not in parent:
            raise PatchError(f"no member to remove at {pointer!r}")
        return document, parent.pop(token)
    if isinstance(parent, list):
        return document, parent.pop(_index(parent, token, insert=False))
    raise PatchError(f"cannot remove from a {type(parent).__name__} at {pointer!r}")


def apply(document: Any, patch: Sequence[Mapping[str, Any]]) -> Any:
    """The result of applying `patch` to a copy of `document`; raises `PatchError` on any failure."""
    result = copy.deepcopy(document)
    for operation in patch:
        op, path = operation.get("op"), operation.get("path")
        if not isinstance(path, str):
            raise PatchError(f"operation without a path: {dict(operation)}")
        if op == "add":
            result = _add(result, path, copy.deepcopy(operation["value"]))
        elif op == "remove":
            result, _ = _remove(result, path)
        elif op == "replace":
            if path == "":
                result = copy.deepcopy(operation["value"])
                continue
            _get(result, path)  # the target must exist
            result, _ = _remove(result, path)
            result = _add(result, path, copy.deepcopy(operation["value"]))
        elif op in ("move", "copy"):
            source = operation.get("from")
            if not isinstance(source, str):
                raise PatchError(f"{op} without a from: {dict(operation)}")
            if op == "move":
                if path.startswith(source + "/"):
                    raise PatchError(f"cannot move {source!r} into its own child {path!r}")
                result, value = _remove(result, source)
            else:
                value = copy.deepcopy(_get(result, source))
            result = _add(result, path, value)
        elif op == "test":
            if not same(_get(result, path), operation.get("value")):
                raise PatchError(f"test failed at {path!r}")
        else:
            raise PatchError(f"unknown operation {op!r}")
    return result
