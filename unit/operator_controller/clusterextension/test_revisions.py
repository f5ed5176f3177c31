"""Revision content digests and catalog selection (the pure parts of the controller)."""

from __future__ import annotations

from typing import Any

from olm.api.clusterextension import CatalogFilter
from olm.operator_controller import applier
from olm.operator_controller.clusterextension import catalogs, revisions


def configmap(name: str, value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns"},
        "data": {"k": value},
    }


def test_the_content_digest_ignores_the_revision_name_but_not_the_content() -> None:
    objects = [configmap("a", "1"), configmap("b", "2")]
    one = revisions.content_digest(applier.pack("ext-1", "ext", objects), None)
    two = revisions.content_digest(applier.pack("ext-2", "ext", list(reversed(objects))), None)
    assert one == two
    changed = revisions.content_digest(
        applier.pack("ext-2", "ext", [configmap("a", "1"), configmap("b", "3")]), None
    )
    assert changed != one
    assert revisions.content_digest(applier.pack("ext-2", "ext", objects), 10) != one


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
    assert catalogs._selected(catalog("c", {"tier": "b"}), catalogs._selector(everything))
    assert catalogs._selected(catalog("c", {"tier": "a"}), catalogs._selector(chosen))
    assert not catalogs._selected(catalog("c", {"tier": "b"}), catalogs._selector(chosen))
    assert not catalogs._selected(
        catalog("c", {"tier": "a"}, availabilityMode="Unavailable"), catalogs._selector(chosen)
    )


def test_the_fingerprint_changes_with_what_resolution_depends_on() -> None:
    base = catalog("c", {"x": "1"}, priority=0)
    base["status"] = {
        "conditions": [{"type": "Serving", "status": "True"}],
        "resolvedSource": {"image": {"ref": "r@sha256:1"}},
    }
    same = {**base, "metadata": {**base["metadata"], "resourceVersion": "9"}}
    assert catalogs._fingerprint(base) == catalogs._fingerprint(same)
    moved = {**base, "status": {**base["status"], "resolvedSource": {"image": {"ref": "r@sha256:2"}}}}
    assert catalogs._fingerprint(moved) != catalogs._fingerprint(base)
    reprioritised = {**base, "spec": {"priority": 5}}
    assert catalogs._fingerprint(reprioritised) != catalogs._fingerprint(base)


def test_a_catalog_change_concerns_the_packages_it_held_and_holds() -> None:
    assert catalogs.affected_packages(frozenset({"a", "b"}), frozenset({"b", "c"})) == {"a", "b", "c"}
    assert catalogs.affected_packages(frozenset(), frozenset({"new"})) == {"new"}  # a new catalog
    assert catalogs.affected_packages(frozenset({"gone"}), frozenset()) == {"gone"}  # stopped serving
    assert catalogs.affected_packages(None, frozenset({"a"})) is None  # unknown before: everyone
    assert catalogs.affected_packages(frozenset({"a"}), None) is None  # names unreadable: everyone
