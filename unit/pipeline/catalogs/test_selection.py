"""Catalog selection: which ClusterCatalogs an extension reads, and what it says of the others."""

from __future__ import annotations

from typing import Any

from olm.api.extensionspec import CatalogSource
from olm.pipeline.catalogs import (
    CatalogRef,
    CatalogUnreachable,
    MalformedCatalog,
    PackageContent,
    gathering,
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
        gathering.Skipped(
            name="bad",
            why=gathering.MALFORMED,
            error="catalog 'bad' served malformed content: line 1 is not JSON",
        ),
        gathering.Skipped(name="down", why=gathering.UNREACHABLE, error="connection refused"),
        gathering.Skipped(name="off", why=gathering.UNAVAILABLE),
        gathering.Skipped(
            name="unpacking",
            why=gathering.NOT_SERVING,
            error="catalog 'unpacking' is not being served: condition Serving is not True",
        ),
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
