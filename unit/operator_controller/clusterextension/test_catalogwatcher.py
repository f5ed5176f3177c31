"""Which extensions a catalog change concerns (the ClusterExtension controller's catalog watcher)."""

from __future__ import annotations

from typing import Any

from olm.operator_controller.clusterextension import catalogwatcher as watcher


def catalog(name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "spec": spec}


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
