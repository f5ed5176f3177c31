"""Catalog selection and which extensions a catalog change concerns."""

from __future__ import annotations

from typing import Any

from olm.api.extensionspec import CatalogSource
from olm.operator_controller.catalogs import (
    CatalogRef,
    CatalogUnreachable,
    MalformedCatalog,
    PackageContent,
    gathering,
    watcher,
)


def catalog(name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "spec": spec}


def serving(name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    found = catalog(name, labels, **spec)
    found["status"] = {
        "conditions": [{"type": "Serving", "status": "True"}],
        "urls": {"base": f"https://catalogd.example/{name}"},
        "resolvedSource": {"image": {"ref": f"r/{name}@sha256:1"}},
    }
    return found


async def test_gathering_names_what_it_skipped_and_left_out() -> None:
    chosen = CatalogSource.parse(
        {
            "packageName": "p",
            "selector": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]},
        }
    )
    listed = [
        serving("good", {"tier": "a"}, priority=3),
        serving("down", {"tier": "a"}),
        serving("bad", {"tier": "a"}),
        catalog("unpacking", {"tier": "a"}),  # no status yet
        serving("off", {"tier": "a"}, availabilityMode="Unavailable"),
        serving("elsewhere", {"tier": "b"}),
        serving("unlabelled", {}),
    ]

    async def read_package(ref: CatalogRef, package: str) -> PackageContent:
        if ref.name == "down":
            raise CatalogUnreachable(ref.name, "connection refused")
        if ref.name == "bad":
            raise MalformedCatalog(ref.name, "line 1 is not JSON")
        return PackageContent(name=package)

    gathered = await gathering.gather_from(listed, read_package, chosen)
    assert [(c.name, c.priority) for c in gathered.contents] == [("good", 3)]
    assert gathered.skipped == (
        gathering.Skipped(name="bad", why=gathering.MALFORMED),
        gathering.Skipped(name="down", why=gathering.UNREACHABLE),
        gathering.Skipped(name="off", why=gathering.UNAVAILABLE),
        gathering.Skipped(name="unpacking", why=gathering.NOT_SERVING),
    )
    assert gathered.not_selected == ("elsewhere", "unlabelled")
    assert gathered.selected == 5


async def test_an_absent_selector_selects_every_catalog() -> None:
    everything = CatalogSource.parse({"packageName": "p"})

    async def read_package(ref: CatalogRef, package: str) -> PackageContent:
        return PackageContent(name=package)

    gathered = await gathering.gather_from(
        [serving("a", {}), serving("b", {"x": "y"})], read_package, everything
    )
    assert [c.name for c in gathered.contents] == ["a", "b"]
    assert gathered.not_selected == ()


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
