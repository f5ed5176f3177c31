"""The ClusterObjectSet index by owner: each extension's revisions without a scan of all of them."""

from __future__ import annotations

from typing import Any

from olm.api import names
from olm.operator_controller import revision_owners
from olm_runtime.cache import Store


def _revision(name: str, owner: tuple[str, str] | None) -> dict[str, Any]:
    labels = {names.REVISION_NAME_LABEL: name}
    if owner is not None:
        labels |= {names.OWNER_KIND_LABEL: owner[0], names.OWNER_NAME_LABEL: owner[1]}
    return {"metadata": {"name": name, "labels": labels}}


def test_revisions_are_indexed_by_their_owner_labels() -> None:
    store = Store()
    store.add_indexers({revision_owners.INDEX: revision_owners.owner_keys})
    for revision in (
        _revision("a-1", (names.CLUSTER_EXTENSION, "a")),
        _revision("a-2", (names.CLUSTER_EXTENSION, "a")),
        _revision("b-1", (names.CLUSTER_EXTENSION, "b")),
        _revision("loose", None),
    ):
        store.upsert(revision)

    def owned(name: str) -> list[str]:
        found = store.by_index(revision_owners.INDEX, revision_owners.key(names.CLUSTER_EXTENSION, name))
        return sorted(o["metadata"]["name"] for o in found)

    assert owned("a") == ["a-1", "a-2"]
    assert owned("b") == ["b-1"]
    assert owned("loose") == []  # a revision without owner labels is in no owner's entry
    assert store.has_index(revision_owners.INDEX)
    assert not store.has_index("another")
