"""The on-disk index of a stored catalog: where each meta's line is, by schema, package and name.

Metas are numbered in file order. The index keeps, compactly (`array`s of machine integers):

- `offsets`: byte offset of each meta's line in `all.jsonl`, plus the file size at the end, so meta
  `i` spans `offsets[i]:offsets[i+1]` (its JSON and the newline);
- for each of schema, package and name: the id of each meta's value (0 for none) and, per value, the
  ascending list of metas that have it (a posting list).

A query takes the shortest posting list among the fields it names and keeps the metas whose other
fields match, so its cost follows the size of the answer, not of the catalog. Consecutive metas
merge into one byte range, so a package's bundles written together are read with one `pread`.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

FORMAT_VERSION = 1
FIELDS = ("schema", "package", "name")


@dataclass(slots=True)
class _Field:
    values: list[str] = field(default_factory=lambda: [""])
    """Value of each id; id 0 is "no value"."""
    ids: dict[str, int] = field(default_factory=lambda: {"": 0})
    of_meta: array[int] = field(default_factory=lambda: array("I"))
    postings: dict[int, array[int]] = field(default_factory=dict)

    def add(self, meta: int, value: str) -> None:
        value_id = self.ids.get(value)
        if value_id is None:
            value_id = self.ids[value] = len(self.values)
            self.values.append(value)
        self.of_meta.append(value_id)
        if value_id:
            self.postings.setdefault(value_id, array("I")).append(meta)


class CatalogIndex:
    """Build with `add` while writing `all.jsonl`, then `finish`; or `load` a saved one."""

    def __init__(self) -> None:
        self.offsets: array[int] = array("Q", [0])
        self._fields = {name: _Field() for name in FIELDS}

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def add(self, length: int, *, schema: str, package: str, name: str) -> None:
        """Record the next meta: its line's length in bytes and its three indexed fields."""
        meta = len(self)
        self.offsets.append(self.offsets[-1] + length)
        for key, value in (("schema", schema), ("package", package), ("name", name)):
            self._fields[key].add(meta, value)

    @property
    def size(self) -> int:
        """Bytes of `all.jsonl` the index covers."""
        return self.offsets[-1]

    def select(self, *, schema: str = "", package: str = "", name: str = "") -> list[tuple[int, int]]:
        """Byte ranges `(offset, length)` of the metas matching every non-empty argument, in file order."""
        wanted = {
            key: value for key, value in (("schema", schema), ("package", package), ("name", name)) if value
        }
        if not wanted:
            return [(0, self.size)] if self.size else []
        ids: dict[str, int] = {}
        for key, value in wanted.items():
            value_id = self._fields[key].ids.get(value)
            if value_id is None:
                return []
            ids[key] = value_id
        shortest = min(ids, key=lambda key: len(self._fields[key].postings[ids[key]]))
        checks = [(self._fields[key].of_meta, ids[key]) for key in ids if key != shortest]
        matches = (
            m for m in self._fields[shortest].postings[ids[shortest]] if all(of[m] == v for of, v in checks)
        )
        return list(_ranges(matches, self.offsets))

    def values(self, key: str) -> list[str]:
        """The distinct values of one field (schema, package or name), in first-seen order."""
        return self._fields[key].values[1:]

    def save(self, path: Path) -> None:
        document = {
            "version": FORMAT_VERSION,
            "offsets": self.offsets.tolist(),
            "fields": {
                key: {"values": f.values, "of_meta": f.of_meta.tolist()} for key, f in self._fields.items()
            },
        }
        path.write_bytes(orjson.dumps(document))

    @classmethod
    def load(cls, path: Path) -> CatalogIndex:
        document = orjson.loads(path.read_bytes())
        if document.get("version") != FORMAT_VERSION:
            raise ValueError(f"{path}: index format {document.get('version')!r} is not {FORMAT_VERSION}")
        index = cls()
        index.offsets = array("Q", document["offsets"])
        for key in FIELDS:
            saved = document["fields"][key]
            rebuilt = _Field(values=list(saved["values"]))
            rebuilt.ids = {value: i for i, value in enumerate(rebuilt.values)}
            rebuilt.of_meta = array("I", saved["of_meta"])
            for meta, value_id in enumerate(rebuilt.of_meta):
                if value_id:
                    rebuilt.postings.setdefault(value_id, array("I")).append(meta)
            index._fields[key] = rebuilt
        return index


def _ranges(metas: Iterator[int], offsets: array[int]) -> Iterator[tuple[int, int]]:
    """Merge ascending meta numbers into byte ranges, joining neighbours."""
    start = end = -1
    for meta in metas:
        if meta == end:
            end += 1
            continue
        if start >= 0:
            yield offsets[start], offsets[end] - offsets[start]
        start, end = meta, meta + 1
    if start >= 0:
        yield offsets[start], offsets[end] - offsets[start]
