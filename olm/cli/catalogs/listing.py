"""`olmctl catalog list`: the ClusterCatalogs with their state and package counts.

    olmctl catalog list -o yaml

The packages of each serving catalog are counted from its content (`serving`); a catalog whose
content cannot be read is listed without a count, with a warning, and the command exits 1.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from olm.api import conditions as api
from olm.cli import render
from olm.cli.catalogs import serving
from olm.cli.session import Session
from olm_runtime import conditions

__all__ = ["catalog_list", "catalog_row"]


def catalog_row(catalog: Mapping[str, Any], packages: int | None) -> dict[str, Any]:
    """One ClusterCatalog as `catalog list` shows it; `packages` is None when not read."""
    spec = catalog.get("spec") or {}
    status = catalog.get("status") or {}
    image = (spec.get("source") or {}).get("image") or {}
    return {
        "name": catalog.get("metadata", {}).get("name", ""),
        "serving": conditions.is_true(status.get("conditions") or (), api.TYPE_SERVING),
        "lastUnpacked": status.get("lastUnpacked") or "",
        "packages": packages,
        "image": image.get("ref", ""),
        "resolvedImage": ((status.get("resolvedSource") or {}).get("image") or {}).get("ref", ""),
        "pollIntervalMinutes": image.get("pollIntervalMinutes"),
        "priority": spec.get("priority", 0),
        "url": (status.get("urls") or {}).get("base", ""),
    }


async def catalog_list(session: Session, args: argparse.Namespace) -> int:
    catalogs = await serving.cluster_catalogs(session, None)
    contents = await serving.read(session, catalogs)
    serving.warn_failed(session, contents)
    rows = []
    for catalog in catalogs:
        read = contents.packages.get(str(catalog["metadata"]["name"]))
        count = None if read is None else sum(1 for p in read.values() if p.package is not None)
        rows.append(catalog_row(catalog, count))
    if not rows and args.output == "table":
        print("No ClusterCatalogs found.", file=session.err)
        return 0
    text = render.table(
        ["NAME", "SERVING", "LAST UNPACKED", "PACKAGES"],
        [
            [
                r["name"],
                str(r["serving"]).lower(),
                r["lastUnpacked"],
                "" if r["packages"] is None else str(r["packages"]),
            ]
            for r in rows
        ],
    )
    render.emit(session.out, args.output, rows, text)
    return 1 if contents.failed else 0
