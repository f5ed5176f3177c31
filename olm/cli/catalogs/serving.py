"""The content of the serving ClusterCatalogs, read together: what `catalog list` counts, `search`
searches and `package show|versions|graph` look a package up in.

Each catalog is read in full (`content.read_catalog`), all at once. A catalog that is not serving is
left out with the reason its status gives; one whose content cannot be read is left out with a
warning on stderr, and the command exits 1 after printing what the others hold. A package with a
malformed object is left out of its catalog with a warning, as the resolver skips that catalog for
that package only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.api.kinds import CLUSTER_CATALOG
from olm.cli.catalogs.content import read_catalog
from olm.cli.commands import CommandFailed, not_found
from olm.cli.session import Session
from olm.pipeline.catalogs import CatalogClientError, CatalogRef, PackageContent
from olm_runtime.client import errors

__all__ = ["Contents", "cluster_catalogs", "find_package", "read", "warn_failed"]


@dataclass
class Contents:
    """The content of the serving catalogs, and why the others were left out."""

    packages: dict[str, dict[str, PackageContent]] = field(default_factory=dict)
    """Per catalog name."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Catalog name -> why it is not serving."""
    failed: dict[str, str] = field(default_factory=dict)
    """Catalog name -> why its content could not be read."""
    malformed: list[str] = field(default_factory=list)
    """Why each package left out of a serving catalog could not be read."""


async def cluster_catalogs(session: Session, only: str | None) -> list[dict[str, Any]]:
    """The ClusterCatalogs by name, or only `only` (`CommandFailed` when it does not exist)."""
    if only is not None:
        try:
            return [dict(await session.client.get(CLUSTER_CATALOG, only))]
        except errors.NotFound:
            raise not_found("clustercatalog", only) from None
    found = await session.client.list(CLUSTER_CATALOG)
    return sorted((dict(c) for c in found.items), key=lambda c: str(c["metadata"]["name"]))


async def read(session: Session, catalogs: Sequence[dict[str, Any]]) -> Contents:
    """The content of each of `catalogs` that serves, read concurrently."""
    contents = Contents()
    refs: list[CatalogRef] = []
    for catalog in catalogs:
        try:
            refs.append(CatalogRef.from_cluster_catalog(catalog))
        except CatalogClientError as err:
            contents.skipped[str(catalog["metadata"]["name"])] = err.message
    results = await asyncio.gather(
        *(read_catalog(session.source, ref) for ref in refs), return_exceptions=True
    )
    for ref, result in zip(refs, results, strict=True):
        if isinstance(result, CatalogClientError):
            contents.failed[ref.name] = result.message
        elif isinstance(result, BaseException):
            raise result
        else:
            contents.packages[ref.name] = result
            contents.malformed.extend(error.message for _, error in sorted(result.malformed.items()))
    return contents


def warn_failed(session: Session, contents: Contents) -> None:
    for message in [*contents.failed.values(), *contents.malformed]:
        print(f"warning: {message}", file=session.err)


async def find_package(
    session: Session, package: str, catalog: str | None
) -> list[tuple[str, PackageContent]]:
    """The package's content in each serving catalog holding it (or in `catalog`), by catalog name;
    raises `CommandFailed` naming the catalogs considered when none holds it."""
    contents = await read(session, await cluster_catalogs(session, catalog))
    warn_failed(session, contents)
    found = [
        (name, packages[package])
        for name, packages in sorted(contents.packages.items())
        if package in packages and not packages[package].empty
    ]
    if not found:
        considered = sorted([*contents.packages, *contents.skipped, *contents.failed])
        where = f"catalog {catalog!r}" if catalog else "any serving catalog"
        detail = f" (catalogs: {', '.join(considered)})" if considered and not catalog else ""
        if catalog in contents.skipped:
            detail = f" ({contents.skipped[catalog]})"
        raise CommandFailed(f"package {package!r} not found in {where}{detail}")
    return found
