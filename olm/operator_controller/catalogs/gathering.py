"""Which catalogs an extension resolves against, and their content for its package.

`gather` lists the ClusterCatalogs the extension's selector picks (an absent selector picks all;
`availabilityMode: Unavailable` never counts), reads the package from each serving one and names
the others as skipped with the reason: a catalog that is down, not yet unpacked or malformed never
stops resolution against the rest, and the resolver never moves an installed extension to a
non-successor because one is missing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from olm.api.clusterextension import CatalogFilter
from olm.api.kinds import CLUSTER_CATALOG
from olm.operator_controller.catalogs._client import CatalogClient, CatalogRef
from olm.operator_controller.catalogs._content import PackageContent
from olm.operator_controller.catalogs._errors import CatalogClientError
from olm_runtime import cache

__all__ = ["CatalogContent", "Gathered", "gather"]


@dataclass(frozen=True, kw_only=True)
class CatalogContent:
    """One selected, serving catalog: its name, `spec.priority` and content for the package."""

    name: str
    priority: int = 0
    content: PackageContent


@dataclass(frozen=True, kw_only=True)
class Gathered:
    contents: tuple[CatalogContent, ...]
    """Selected catalogs that answered for the package."""
    skipped: tuple[str, ...]
    """Selected catalogs that could not be read, as `name (reason)`, sorted."""
    selected: int
    """How many catalogs the selector picked (available ones only)."""


def _selector(source: CatalogFilter) -> cache.LabelSelector:
    """The catalog selector; absent selects every catalog (the empty selector matches all)."""
    if source.selector is None:
        return cache.LabelSelector()
    return cache.selector_from_dict(source.selector.model_dump(by_alias=True, exclude_none=True))


def _selected(catalog: Mapping[str, Any], selector: cache.LabelSelector) -> bool:
    if (catalog.get("spec") or {}).get("availabilityMode") == "Unavailable":
        return False
    return selector.matches((catalog.get("metadata") or {}).get("labels"))


async def gather(reader: cache.CacheReader, client: CatalogClient, source: CatalogFilter) -> Gathered:
    selector = _selector(source)
    chosen = [c for c in await reader.list(CLUSTER_CATALOG) if _selected(c, selector)]

    async def read(catalog: Mapping[str, Any]) -> CatalogContent | str:
        name = (catalog.get("metadata") or {}).get("name", "")
        try:
            ref = CatalogRef.from_cluster_catalog(catalog)
            content = await client.get_package(ref, source.package_name)
        except CatalogClientError as err:
            return f"{name} ({err})"
        priority = int((catalog.get("spec") or {}).get("priority") or 0)
        return CatalogContent(name=name, priority=priority, content=content)

    results = await asyncio.gather(*(read(c) for c in chosen))
    return Gathered(
        contents=tuple(r for r in results if isinstance(r, CatalogContent)),
        skipped=tuple(sorted(r for r in results if isinstance(r, str))),
        selected=len(chosen),
    )
