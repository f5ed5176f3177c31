"""Walking a catalog directory: every file, in lexical order, read as a stream of metas.

A file whose first non-blank byte is `{` is a JSON stream (objects back to back, compact or
pretty-printed); anything else is YAML (documents separated by `---`). This is the rule the
upstream loader applies, so the same files parse the same way. Files are read incrementally;
one object is in memory at a time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson
import yaml

from olm.compat import kubeyaml
from olm.fbc import _jsonstream
from olm.fbc._errors import ParseError
from olm.fbc._ignore import IGNORE_FILE, IgnoreMatcher
from olm.fbc._meta import Meta, Origin

DEFAULT_MAX_OBJECT_BYTES = 64 << 20
"""Largest single object accepted from a JSON stream (bundles with inline manifests can be large)."""

_DUMP_OPTIONS = orjson.OPT_NON_STR_KEYS


def iter_files(root: Path) -> Iterator[tuple[str, Path]]:
    """Yield `(relative path, path)` of every catalog file under `root`, in lexical order.

    `.indexignore` patterns are honoured; symbolic links to directories are not followed;
    anything that is not a regular file (or a link to one inside `root`) is skipped.
    """
    if not root.is_dir():
        raise ParseError(str(root), None, "the catalog root is not a directory")
    resolved_root = root.resolve()
    matcher = IgnoreMatcher()
    yield from _walk(root, (), matcher, resolved_root)


def _walk(
    directory: Path, parts: tuple[str, ...], matcher: IgnoreMatcher, root: Path
) -> Iterator[tuple[str, Path]]:
    ignore_file = directory / IGNORE_FILE
    if ignore_file.is_file() and not ignore_file.is_symlink():
        matcher.add_file(parts, ignore_file.read_text(errors="replace"))
    with os.scandir(directory) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    for entry in entries:
        child = (*parts, entry.name)
        is_dir = entry.is_dir(follow_symlinks=False)
        if matcher.ignored(child, is_dir=is_dir):
            continue
        if is_dir:
            yield from _walk(Path(entry.path), child, matcher, root)
        elif entry.is_file(follow_symlinks=False) or _link_to_file_inside(Path(entry.path), root):
            yield "/".join(child), Path(entry.path)


def _link_to_file_inside(path: Path, root: Path) -> bool:
    if not path.is_symlink():
        return False
    target = path.resolve()
    return target.is_file() and target.is_relative_to(root)


def iter_metas(root: Path, *, max_object_bytes: int = DEFAULT_MAX_OBJECT_BYTES) -> Iterator[Meta]:
    """Every meta of the catalog under `root`, file by file, in file order.

    Raises `ParseError` naming the file and line of the first object that cannot be read.
    """
    for relative, path in iter_files(root):
        with path.open("rb") as stream:
            yield from iter_stream(stream, relative, max_object_bytes=max_object_bytes)


def iter_stream(
    stream: IO[bytes], path: str, *, max_object_bytes: int = DEFAULT_MAX_OBJECT_BYTES
) -> Iterator[Meta]:
    """The metas of one file's content; `path` names it in origins and errors."""
    for line, value in _documents(stream, path, max_object_bytes):
        yield to_meta(value, Origin(path, line))


def _documents(stream: IO[bytes], path: str, max_object_bytes: int) -> Iterator[tuple[int, Any]]:
    head = stream.read(4096)
    stream.seek(0)
    if head.lstrip()[:1] == b"{":
        try:
            yield from _jsonstream.iter_objects(stream, max_object_bytes=max_object_bytes)
        except _jsonstream.JSONStreamError as error:
            raise ParseError(path, error.line, error.message) from None
        return
    try:
        yield from kubeyaml.iter_documents(stream)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        raise ParseError(path, line, f"invalid YAML: {error.problem or error}") from None
    except (yaml.YAMLError, ValueError) as error:
        raise ParseError(path, None, f"invalid YAML: {error}") from None


def to_meta(value: Any, origin: Origin) -> Meta:
    """Build a meta from one decoded object; refuses objects without a string `schema`."""
    if not isinstance(value, dict):
        raise ParseError(origin.path, origin.line, f"expected an object, found {type(value).__name__}")
    fields = {}
    for key in ("schema", "package", "name"):
        field = value.get(key)
        if field is not None and not isinstance(field, str):
            raise ParseError(origin.path, origin.line, f"field {key!r} must be a string")
        fields[key] = field or ""
    if not fields["schema"]:
        raise ParseError(origin.path, origin.line, "the object has no 'schema' field")
    try:
        blob = orjson.dumps(value, option=_DUMP_OPTIONS)
    except TypeError as error:
        raise ParseError(origin.path, origin.line, f"cannot encode as JSON: {error}") from None
    return Meta(
        schema=fields["schema"], package=fields["package"], name=fields["name"], blob=blob, origin=origin
    )
