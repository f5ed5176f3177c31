"""`BUNDLE_PROPERTIES` names every property the resolver reads: on real packages, resolving against
bundles trimmed to those properties picks what resolving against the whole bundles picks."""

from __future__ import annotations

from typing import Any

import pytest

from olm import fbc
from olm.api.extensionspec import CatalogSource
from olm.pipeline import catalogs, resolve
from unit.pipeline.resolve.catalogs import COMMUNITY


def contents(package: str) -> tuple[catalogs.PackageContent, catalogs.PackageContent]:
    directory = COMMUNITY / package
    if not directory.is_dir():
        pytest.skip(f"real catalog data not found at {directory.resolve()}")
    lines = [meta.blob for meta in fbc.iter_metas(directory)]
    whole = catalogs.parse_lines("community", package, lines)
    trimmed = catalogs.parse_lines("community", package, lines, bundle_properties=resolve.BUNDLE_PROPERTIES)
    return whole, trimmed


def outcome(content: catalogs.PackageContent, installed: str | None, source: dict[str, Any]) -> object:
    current = None
    if installed is not None:
        (bundle,) = [b for b in content.bundles if b.version == installed]
        current = resolve.Installed(name=bundle.name, version=installed)
    catalog = [resolve.CatalogContent(name="community", priority=0, content=content)]
    try:
        return resolve.resolve(CatalogSource.parse(source), current, catalog)
    except resolve.ResolutionError as err:
        return (type(err), str(err))


@pytest.mark.parametrize(
    ("package", "installed", "source"),
    [
        pytest.param("sailoperator", None, {"channels": ["stable"]}, id="sailoperator-fresh"),
        pytest.param("sailoperator", "1.25.0", {"channels": ["stable"]}, id="sailoperator-upgrade"),
        pytest.param("infinispan", None, {}, id="infinispan-fresh"),
        pytest.param("kube-green", "0.5.0", {}, id="kube-green-upgrade"),
        pytest.param("cat-facts-operator", None, {"version": ">=0.0.1"}, id="cat-facts-range"),
    ],
)
def test_trimmed_bundles_resolve_alike(package: str, installed: str | None, source: dict[str, Any]) -> None:
    whole, trimmed = contents(package)
    kept = {p.type for b in trimmed.bundles for p in b.properties}
    assert kept <= resolve.BUNDLE_PROPERTIES
    assert {p.type for b in whole.bundles for p in b.properties} - kept, "nothing was trimmed"
    assert outcome(trimmed, installed, {"packageName": package, **source}) == outcome(
        whole, installed, {"packageName": package, **source}
    )
