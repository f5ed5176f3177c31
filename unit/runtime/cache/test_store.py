"""The store: keyed by namespace/name, a namespace index always, custom indexes kept exact."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olm_runtime import cache
from unit.runtime.cache.fakes import cm


def owner_uids(obj: cache.Object) -> list[str]:
    return [ref["uid"] for ref in obj["metadata"].get("ownerReferences") or ()]


def owned(name: str, rv: int, *uids: str, namespace: str = "ns") -> dict[str, object]:
    obj = cm(name, rv, namespace)
    obj["metadata"]["ownerReferences"] = [{"uid": u} for u in uids]
    return obj


def test_keys_are_namespace_slash_name_or_name_for_cluster_scoped_objects() -> None:
    assert cache.object_key(cm("a", 1, "ns")) == "ns/a"
    assert cache.object_key({"metadata": {"name": "node-1"}}) == "node-1"


def test_upsert_returns_the_replaced_object_and_delete_the_removed_one() -> None:
    store = cache.Store()
    first, second = cm("a", 1), cm("a", 2)
    assert store.upsert(first) is None
    assert store.upsert(second) is first
    assert store.get("default/a") is second
    assert len(store) == 1
    assert store.delete("default/a") is second
    assert store.delete("default/a") is None
    assert store.list() == []


def test_the_namespace_index_is_built_in_and_skips_cluster_scoped_objects() -> None:
    store = cache.Store()
    for obj in (cm("a", 1, "x"), cm("b", 2, "x"), cm("c", 3, "y"), {"metadata": {"name": "cluster"}}):
        store.upsert(obj)
    assert sorted(store.index_keys(cache.NAMESPACE_INDEX, "x")) == ["x/a", "x/b"]
    assert sorted(store.index_values(cache.NAMESPACE_INDEX)) == ["x", "y"]


def test_custom_indexes_follow_updates_and_deletes_exactly() -> None:
    store = cache.Store({"by-owner": owner_uids})
    store.upsert(owned("a", 1, "u1", "u2"))
    store.upsert(owned("b", 2, "u1"))
    assert sorted(o["metadata"]["name"] for o in store.by_index("by-owner", "u1")) == ["a", "b"]
    store.upsert(owned("a", 3, "u3"))  # a changed owners
    assert [o["metadata"]["name"] for o in store.by_index("by-owner", "u1")] == ["b"]
    assert store.by_index("by-owner", "u2") == []
    assert "u2" not in store.index_values("by-owner")  # empty buckets are dropped
    store.delete("ns/b")
    assert sorted(store.index_values("by-owner")) == ["u3"]


def test_indexes_added_later_cover_existing_objects() -> None:
    store = cache.Store()
    store.upsert(owned("a", 1, "u1"))
    store.add_indexers({"by-owner": owner_uids})
    assert [o["metadata"]["name"] for o in store.by_index("by-owner", "u1")] == ["a"]
    with pytest.raises(ValueError, match="already exists"):
        store.add_indexers({"by-owner": owner_uids})


def test_an_unknown_index_name_says_which_exist() -> None:
    with pytest.raises(KeyError, match="known: namespace"):
        cache.Store().by_index("nope", "x")


def test_an_index_function_returning_a_string_is_a_mistake_caught_early() -> None:
    store = cache.Store({"bad": lambda o: o["metadata"]["name"]})
    with pytest.raises(TypeError, match="iterable of strings"):
        store.upsert(cm("a", 1))
    assert len(store) == 0


def test_a_compact_store_reads_equal_copies_that_may_be_changed_freely() -> None:
    store = cache.Store({"by-owner": owner_uids}, compact=True)
    first = owned("a", 1, "u1")
    assert store.upsert(first) is None
    read = store.get("ns/a")
    assert read == first
    assert read is not first
    assert store.get("ns/a") is not read  # every read parses its own copy
    read["metadata"]["labels"] = {"changed": "by a reader"}
    first["metadata"]["name"] = "changed by the writer"  # type: ignore[index]
    assert store.get("ns/a") == owned("a", 1, "u1")
    replaced = store.upsert(owned("a", 2, "u2"))
    assert replaced == owned("a", 1, "u1")
    assert [o["metadata"]["resourceVersion"] for o in store.by_index("by-owner", "u2")] == ["2"]
    assert store.by_index("by-owner", "u1") == []
    assert store.list() == [owned("a", 2, "u2")]
    assert store.delete("ns/a") == owned("a", 2, "u2")
    assert store.delete("ns/a") is None
    assert len(store) == 0


NAMES = st.sampled_from(["a", "b", "c"])
SPACES = st.sampled_from(["ns1", "ns2"])
OWNERS = st.lists(st.sampled_from(["u1", "u2", "u3"]), max_size=3, unique=True)
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("upsert"), NAMES, SPACES, OWNERS),
        st.tuples(st.just("delete"), NAMES, SPACES, st.just([])),
        st.tuples(st.just("index"), st.just(""), st.just(""), st.just([])),
    ),
    max_size=40,
)


@pytest.mark.parametrize("compact", [False, True], ids=["objects", "compact"])
@settings(max_examples=200, deadline=None)
@given(OPERATIONS)
def test_any_sequence_of_changes_keeps_every_index_equal_to_a_scan_of_the_objects(
    compact: bool, operations: list[tuple[str, str, str, list[str]]]
) -> None:
    store = cache.Store(compact=compact)
    model: dict[str, dict[str, object]] = {}  # key -> object, the plain truth

    def same(found: cache.Object | None, expected: cache.Object | None) -> bool:
        """A store hands out what it holds; a compact one, equal copies."""
        return found == expected if compact else found is expected

    indexed_owners = False
    for version, (operation, name, namespace, uids) in enumerate(operations):
        key = f"{namespace}/{name}"
        if operation == "upsert":
            obj = owned(name, version, *uids, namespace=namespace)
            assert same(store.upsert(obj), model.get(key))
            model[key] = obj
        elif operation == "delete":
            assert same(store.delete(key), model.pop(key, None))
        elif not indexed_owners:  # an index added part-way must cover what is already there
            store.add_indexers({"owner": owner_uids})
            indexed_owners = True
    assert sorted(store.keys()) == sorted(model)
    assert sorted(store.list(), key=cache.object_key) == [model[k] for k in sorted(model)]
    for namespace in ("ns1", "ns2"):
        expected = sorted(k for k in model if k.startswith(f"{namespace}/"))
        assert sorted(store.index_keys(cache.NAMESPACE_INDEX, namespace)) == expected
    if indexed_owners:
        for uid in ("u1", "u2", "u3"):
            expected = sorted(k for k, o in model.items() if uid in owner_uids(o))
            assert sorted(store.index_keys("owner", uid)) == expected
