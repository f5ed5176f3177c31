"""Catalog selection and which extensions a catalog change concerns."""

from __future__ import annotations

from typing import Any

from olm.api.clusterextension import CatalogFilter
from olm.operator_controller.catalogs import gathering, watcher


def catalog(name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "spec": spec}


def test_selection_by_label_and_availability() -> None:
    everything = CatalogFilter.model_validate({"packageName": "p"})
    chosen = CatalogFilter.model_validate(
        {
            "packageName": "p",
            "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]},
        }
    )
    assert gathering._selected(catalog("c", {"tier": "b"}), gathering._selector(everything))
    assert gathering._selected(catalog("c", {"tier": "a"}), gathering._selector(chosen))
    assert not gathering._selected(catalog("c", {"tier": "b"}), gathering._selector(chosen))
    assert not gathering._selected(
        catalog("c", {"tier": "a"}, availabilityMode="Unavailable"), gathering._selector(chosen)
    )


def test_the_fingerprint_changes_with_what_resolution_depends_on() -> None:
    base = catalog("c", {"x": "1"}, priority=0)
    base["status"] = {
        "conditions": [{"type": "Serving", "status": "True"}],
        "resolvedSource": {"image": {"ref": "r@sha256:1"}},
    }
    same = {**base, "metadata": {**base["metadata"], "resourceVersion": "9"}}
    assert watcher._fingerprint(base) == watcher._fingerprint(same)
    moved = {**base, "status": {**base["status"], "resolvedSource": {"image": {"ref": "r@sha256:2"}}}}
    assert watcher._fingerprint(moved) != watcher._fingerprint(base)
    reprioritised = {**base, "spec": {"priority": 5}}
    assert watcher._fingerprint(reprioritised) != watcher._fingerprint(base)


def test_a_catalog_change_concerns_the_packages_it_held_and_holds() -> None:
    affected = watcher.affected_packages
    assert affected(frozenset({"a", "b"}), frozenset({"b", "c"})) == frozenset({"a", "b", "c"})
    assert affected(frozenset(), frozenset({"new"})) == frozenset({"new"})  # a new catalog
    assert affected(frozenset({"gone"}), frozenset()) == frozenset({"gone"})  # stopped serving
    assert affected(None, frozenset({"a"})) is None  # unknown before: everyone
    assert affected(frozenset({"a"}), None) is None  # names unreadable: everyone
