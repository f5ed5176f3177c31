"""Which catalogs an extension resolves against, and their content for its package.

`gather` lists the ClusterCatalogs the extension's selector picks (an absent selector picks all),
reads the package from each serving one and names the others as skipped with a short reason
(`availabilityMode: Unavailable`, not serving, unreachable, malformed content): a catalog that is
down, not yet unpacked or malformed never stops resolution against the rest, and the resolver never
moves an installed extension to a non-successor because one is missing. The catalogs the selector
left out are named too, so that a failed resolution can say where it looked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import structlog

from olm.api.extensionspec import CatalogSource
from olm.api.kinds import CLUSTER_CATALOG
from olm.pipeline.catalogs._client import CatalogClient, CatalogRef
from olm.pipeline.catalogs._content import PackageContent
from olm.pipeline.catalogs._errors import (
    CatalogClientError,
    CatalogNotServing,
    CatalogUnreachable,
)
from olm_runtime import cache

__all__ = [
    "MALFORMED",
    "NOT_SERVING",
    "UNAVAILABLE",
    "UNREACHABLE",
    "CatalogContent",
    "Gathered",
    "PackageReader",
    "Skipped",
    "gather",
    "gather_from",
]

_log = structlog.get_logger("olm.pipeline.catalogs.gathering")

# Why a selected catalog gave no content: short, fixed phrases (condition messages must not change
# between retries, so the error's detail, which may name addresses, goes to the log).
UNAVAILABLE = "availabilityMode: Unavailable"
NOT_SERVING = "not serving"
UNREACHABLE = "unreachable"
MALFORMED = "malformed content"


@dataclass(frozen=True, kw_only=True)
class CatalogContent:
    """One selected, serving catalog: its name, `spec.priority` and content for the package."""

    name: str
    priority: int = 0
    content: PackageContent


@dataclass(frozen=True, kw_only=True, order=True)
class Skipped:
    """A selected catalog that gave no content."""

    name: str
    why: str
    """`UNAVAILABLE`, `NOT_SERVING`, `UNREACHABLE` or `MALFORMED`."""
    error: str = ""
    """What the client said, when reading failed (`CatalogClientError.message`)."""


@dataclass(frozen=True, kw_only=True)
class Gathered:
    contents: tuple[CatalogContent, ...]
    """Selected catalogs that answered for the package."""
    skipped: tuple[Skipped, ...]
    """Selected catalogs that could not be read, sorted by name."""
    not_selected: tuple[str, ...]
    """Catalogs the selector did not pick, sorted."""

    @property
    def selected(self) -> int:
        """How many catalogs the selector picked."""
        return len(self.contents) + len(self.skipped)


def _selector(source: CatalogSource) -> cache.LabelSelector:
    """The catalog selector; absent selects every catalog (the empty selector matches all)."""
    if source.selector is None:
        return cache.LabelSelector()
    return cache.selector_from_dict(source.selector)


def _name(catalog: Mapping[str, Any]) -> str:
    return str((catalog.get("metadata") or {}).get("name", ""))


def _why(err: CatalogClientError) -> str:
    if isinstance(err, CatalogNotServing):
        return NOT_SERVING
    if isinstance(err, CatalogUnreachable):
        return UNREACHABLE
    return MALFORMED


PackageReader = Callable[[CatalogRef, str], Awaitable[PackageContent]]
"""`read(ref, package)`: one package of a catalog version, as `CatalogClient.get_package` reads it."""


async def gather(reader: cache.CacheReader, client: CatalogClient, source: CatalogSource) -> Gathered:
    return await gather_from(await reader.list(CLUSTER_CATALOG), client.get_package, source)


async def gather_from(
    catalogs: Iterable[Mapping[str, Any]], read_package: PackageReader, source: CatalogSource
) -> Gathered:
    """`gather` over ClusterCatalogs read by the caller, with the caller's way of reading content
    (olmctl reads them from outside the cluster, where operator-controller's client cannot)."""
    selector = _selector(source)
    chosen: list[Mapping[str, Any]] = []
    not_selected: list[str] = []
    for catalog in catalogs:
        if selector.matches((catalog.get("metadata") or {}).get("labels")):
            chosen.append(catalog)
        else:
            not_selected.append(_name(catalog))

    async def read(catalog: Mapping[str, Any]) -> CatalogContent | Skipped:
        name = _name(catalog)
        if (catalog.get("spec") or {}).get("availabilityMode") == "Unavailable":
            return Skipped(name=name, why=UNAVAILABLE)
        try:
            ref = CatalogRef.from_cluster_catalog(catalog)
            content = await read_package(ref, source.package_name)
        except CatalogClientError as err:
            _log.info("catalog skipped", catalog=name, error=str(err))
            return Skipped(name=name, why=_why(err), error=err.message)
        priority = int((catalog.get("spec") or {}).get("priority") or 0)
        return CatalogContent(name=name, priority=priority, content=content)

    results = await asyncio.gather(*(read(c) for c in chosen))
    return Gathered(
        contents=tuple(r for r in results if isinstance(r, CatalogContent)),
        skipped=tuple(sorted(r for r in results if isinstance(r, Skipped))),
        not_selected=tuple(sorted(not_selected)),
    )
