"""An indexed in-memory store of objects, keyed by `namespace/name`.

Indexes map a value computed from each object (its namespace, an owner's uid, a spec field) to the
keys of the objects that have it. The `namespace` index is always present. Index functions may be
added at any time; existing objects are indexed at once.

The store belongs to one event loop and has no locks. It hands out the objects it holds, not
copies: see `olm_runtime.cache._objects` for the read-only contract. A compact store is the
exception: it keeps each object as its JSON bytes, about a sixth of the parsed dicts and lists, and
parses a new copy on every read. That suits an informer that holds a few objects read now and then,
as each of the thousands of drift informers of a controller that watches as many identities does.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping

import orjson

from olm_runtime.cache._objects import Object, object_key

__all__ = ["NAMESPACE_INDEX", "IndexFunc", "Store"]

IndexFunc = Callable[[Object], Iterable[str]]
"""The index values of one object; an empty iterable leaves the object out of the index."""

NAMESPACE_INDEX = "namespace"
"""The built-in index of every store: the object's namespace (cluster-scoped objects are not in it)."""


def _namespace_of(obj: Object) -> tuple[str, ...]:
    namespace = obj["metadata"].get("namespace")
    return (namespace,) if namespace else ()


class Store:
    """Objects by key, with named indexes. Use `Informer`'s read methods rather than mutating this."""

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None, *, compact: bool = False) -> None:
        self._items: dict[str, Object | bytes] = {}
        self.compact = compact
        self._indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: _namespace_of}
        self._indices: dict[str, dict[str, set[str]]] = {NAMESPACE_INDEX: {}}
        if indexers:
            self.add_indexers(indexers)

    # Reads -----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def get(self, key: str) -> Object | None:
        """The object stored under `key` (`namespace/name` or `name`), or `None`."""
        item = self._items.get(key)
        return None if item is None else self._unpack(item)

    def stored(self, key: str) -> Object | bytes | None:
        """What is held under `key`: the object, or in a compact store its JSON. The same bytes
        object until the object changes, so a reader may keep what it parsed from them and reuse
        it while they are the ones stored (`is`)."""
        return self._items.get(key)

    def list(self) -> builtins.list[Object]:
        return [self._unpack(item) for item in self._items.values()]

    def keys(self) -> builtins.list[str]:
        return list(self._items)

    def indexers(self) -> builtins.list[str]:
        """Names of the indexes this store maintains."""
        return list(self._indexers)

    def index_keys(self, index: str, value: str) -> builtins.list[str]:
        """Keys of the objects whose `index` function returned `value`; raises KeyError for an
        unknown index name."""
        return list(self._index(index).get(value, ()))

    def by_index(self, index: str, value: str) -> builtins.list[Object]:
        """Objects whose `index` function returned `value`; raises KeyError for an unknown index."""
        items = self._items
        return [self._unpack(items[k]) for k in self._index(index).get(value, ())]

    def index_values(self, index: str) -> builtins.list[str]:
        """Every value that index currently holds."""
        return list(self._index(index))

    def _index(self, name: str) -> dict[str, set[str]]:
        try:
            return self._indices[name]
        except KeyError:
            raise KeyError(f"no index named {name!r}; known: {', '.join(self._indexers)}") from None

    # Writes ----------------------------------------------------------------------------------

    def has_index(self, name: str) -> bool:
        """Whether an index of that name was added (`add_indexers` refuses a name twice)."""
        return name in self._indexers

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions, indexing the objects already stored. Names must be new."""
        clashes = [name for name in indexers if name in self._indexers]
        if clashes:
            raise ValueError(f"index {', '.join(map(repr, clashes))} already exists")
        for name, func in indexers.items():
            index: dict[str, set[str]] = {}
            for key, item in self._items.items():
                for value in _values(name, func, self._unpack(item)):
                    index.setdefault(value, set()).add(key)
            self._indexers[name] = func
            self._indices[name] = index

    def upsert(self, obj: Object) -> Object | None:
        """Store `obj` under its key; return the object it replaced, if any.

        If an index function raises, nothing is changed and the error propagates.
        """
        key = object_key(obj)
        item = self._items.get(key)
        old = None if item is None else self._unpack(item)
        new_values = {name: _values(name, func, obj) for name, func in self._indexers.items()}
        if old is not None:
            self._unindex(key, old)
        # orjson's result keeps the whole buffer it was written into (8 KiB at least); a copy is
        # as long as the JSON.
        self._items[key] = bytes(memoryview(orjson.dumps(obj))) if self.compact else obj
        for name, values in new_values.items():
            index = self._indices[name]
            for value in values:
                bucket = index.get(value)
                if bucket is None:
                    index[value] = {key}
                else:
                    bucket.add(key)
        return old

    def delete(self, key: str) -> Object | None:
        """Remove the object under `key`; return it, or `None` if there was none."""
        item = self._items.pop(key, None)
        if item is None:
            return None
        old = self._unpack(item)
        self._unindex(key, old)
        return old

    @staticmethod
    def _unpack(item: Object | bytes) -> Object:
        if isinstance(item, bytes):
            parsed: Object = orjson.loads(item)
            return parsed
        return item

    def _unindex(self, key: str, obj: Object) -> None:
        for name, func in self._indexers.items():
            index = self._indices[name]
            try:
                values = _values(name, func, obj)
            except Exception:  # indexed fine when stored; be thorough on removal
                values = [v for v, keys in index.items() if key in keys]
            for value in values:
                bucket = index.get(value)
                if bucket is not None:
                    bucket.discard(key)
                    if not bucket:
                        del index[value]


def _values(name: str, func: IndexFunc, obj: Object) -> list[str]:
    values = func(obj)
    if isinstance(values, str):
        raise TypeError(f"index function {name!r} must return an iterable of strings, not a string")
    return list(values)
