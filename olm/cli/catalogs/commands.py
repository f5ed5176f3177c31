"""`olmctl catalog add|update|remove`: ClusterCatalogs from the command line (`listing`: `list`).

olmctl catalog add demo registry.example/catalogs/demo:latest --poll-interval 10 --priority 5
olmctl catalog update demo --priority 10
olmctl catalog remove demo
"""

from __future__ import annotations

import argparse
from typing import Any

from olm.api.kinds import CLUSTER_CATALOG
from olm.cli.commands import CommandFailed, not_found
from olm.cli.session import Session
from olm_runtime.client import errors

__all__ = ["catalog_add", "catalog_object", "catalog_patch", "catalog_remove", "catalog_update"]


def catalog_object(
    name: str, image: str, *, poll_minutes: int | None, priority: int | None
) -> dict[str, Any]:
    """The ClusterCatalog `catalog add` creates."""
    source: dict[str, Any] = {"ref": image}
    if poll_minutes is not None:
        source["pollIntervalMinutes"] = poll_minutes
    spec: dict[str, Any] = {"source": {"type": "Image", "image": source}}
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": CLUSTER_CATALOG.api_version,
        "kind": CLUSTER_CATALOG.kind,
        "metadata": {"name": name},
        "spec": spec,
    }


def catalog_patch(image: str | None, poll_minutes: int | None, priority: int | None) -> dict[str, Any]:
    """The merge patch of `catalog update`; only the fields given change."""
    image_patch: dict[str, Any] = {}
    if image is not None:
        image_patch["ref"] = image
    if poll_minutes is not None:
        image_patch["pollIntervalMinutes"] = poll_minutes
    spec: dict[str, Any] = {}
    if image_patch:
        spec["source"] = {"image": image_patch}
    if priority is not None:
        spec["priority"] = priority
    return {"spec": spec} if spec else {}


async def catalog_add(session: Session, args: argparse.Namespace) -> int:
    obj = catalog_object(args.name, args.image, poll_minutes=args.poll_interval, priority=args.priority)
    try:
        await session.client.create(obj)
    except errors.AlreadyExists:
        raise CommandFailed(f'clustercatalog "{args.name}" already exists') from None
    print(f"clustercatalog/{args.name} created", file=session.out)
    return 0


async def catalog_update(session: Session, args: argparse.Namespace) -> int:
    patch = catalog_patch(args.image, args.poll_interval, args.priority)
    try:
        await session.client.patch(CLUSTER_CATALOG, args.name, patch)
    except errors.NotFound:
        raise not_found("clustercatalog", args.name) from None
    print(f"clustercatalog/{args.name} updated", file=session.out)
    return 0


async def catalog_remove(session: Session, args: argparse.Namespace) -> int:
    try:
        await session.client.delete(CLUSTER_CATALOG, args.name)
    except errors.NotFound:
        raise not_found("clustercatalog", args.name) from None
    print(f"clustercatalog/{args.name} deleted", file=session.out)
    return 0
