"""The commands, each an async function of the parsed arguments that writes its output and returns
an exit code. Failures a user can act on raise `CommandFailed`; `olm.cli.main` maps the rest."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION
from olm.cli import render
from olm.cli.content import ContentSource, read_catalog
from olm.cli.summary import PackageSummary, VersionRow, catalog_row, matches, summarize, versions_of
from olm.pipeline.catalogs import CatalogClientError, CatalogRef, PackageContent
from olm_runtime.client import Client, errors

__all__ = ["COMMANDS", "Command", "CommandFailed", "Session", "find_package", "get_extension"]


class CommandFailed(Exception):
    """The operation failed for a reason stated in one line (exit code 1)."""


@dataclass
class Session:
    """What every command works with."""

    client: Client
    source: ContentSource
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)


Command = Callable[[Session, argparse.Namespace], Awaitable[int]]
"""A command's handler: writes its output to the session's streams and returns the exit code."""


async def get_extension(session: Session, name: str) -> dict[str, Any]:
    """ClusterExtension `name`; `CommandFailed` when there is none."""
    try:
        return dict(await session.client.get(CLUSTER_EXTENSION, name))
    except errors.NotFound:
        raise CommandFailed(f'clusterextension "{name}" not found') from None


# --- ClusterCatalog objects -----------------------------------------------------------------------


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


def _not_found(name: str) -> CommandFailed:
    return CommandFailed(f'clustercatalog "{name}" not found')


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
        raise _not_found(args.name) from None
    print(f"clustercatalog/{args.name} updated", file=session.out)
    return 0


async def catalog_remove(session: Session, args: argparse.Namespace) -> int:
    try:
        await session.client.delete(CLUSTER_CATALOG, args.name)
    except errors.NotFound:
        raise _not_found(args.name) from None
    print(f"clustercatalog/{args.name} deleted", file=session.out)
    return 0


# --- catalog content ------------------------------------------------------------------------------


@dataclass
class _Contents:
    """The content of the serving catalogs, and why the others were left out."""

    packages: dict[str, dict[str, PackageContent]] = field(default_factory=dict)
    """Per catalog name."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Catalog name -> why it is not serving."""
    failed: dict[str, str] = field(default_factory=dict)
    """Catalog name -> why its content could not be read."""


async def _catalogs(session: Session, only: str | None) -> list[dict[str, Any]]:
    if only is not None:
        try:
            return [dict(await session.client.get(CLUSTER_CATALOG, only))]
        except errors.NotFound:
            raise _not_found(only) from None
    found = await session.client.list(CLUSTER_CATALOG)
    return sorted((dict(c) for c in found.items), key=lambda c: str(c["metadata"]["name"]))


async def _read(session: Session, catalogs: Sequence[dict[str, Any]]) -> _Contents:
    contents = _Contents()
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
    return contents


def _warn_failed(session: Session, contents: _Contents) -> None:
    for message in contents.failed.values():
        print(f"warning: {message}", file=session.err)


def _emit(session: Session, output: str, data: Any, text: str) -> None:
    session.out.write(text if output == "table" else render.dump(data, output))


async def catalog_list(session: Session, args: argparse.Namespace) -> int:
    catalogs = await _catalogs(session, None)
    contents = await _read(session, catalogs)
    _warn_failed(session, contents)
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
    _emit(session, args.output, rows, text)
    return 1 if contents.failed else 0


def _all_summaries(contents: _Contents) -> list[PackageSummary]:
    return [
        summarize(catalog, package)
        for catalog, packages in sorted(contents.packages.items())
        for package in packages.values()
        if not package.empty
    ]


async def search(session: Session, args: argparse.Namespace) -> int:
    contents = await _read(session, await _catalogs(session, args.catalog))
    _warn_failed(session, contents)
    found = [s for s in _all_summaries(contents) if matches(s, args.text)]
    if not found and args.output == "table":
        print(f"No package matches {args.text!r} in the serving catalogs.", file=session.err)
    else:
        text = render.table(
            ["CATALOG", "PACKAGE", "DEFAULT CHANNEL", "LATEST VERSION", "DISPLAY NAME"],
            [[s.catalog, s.package, s.default_channel, s.latest_version, s.display_name] for s in found],
        )
        _emit(session, args.output, [s.to_dict() for s in found], text)
    return 1 if contents.failed else 0


async def find_package(
    session: Session, package: str, catalog: str | None
) -> list[tuple[str, PackageContent]]:
    """The package's content in each serving catalog holding it (or in `catalog`), by catalog name;
    raises `CommandFailed` naming the catalogs considered when none holds it."""
    contents = await _read(session, await _catalogs(session, catalog))
    _warn_failed(session, contents)
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


async def package_show(session: Session, args: argparse.Namespace) -> int:
    summaries = [
        summarize(name, content) for name, content in await find_package(session, args.package, args.catalog)
    ]
    text = "\n".join(render.package_text(s) for s in summaries)
    _emit(session, args.output, [s.to_dict() for s in summaries], text)
    return 0


async def package_versions(session: Session, args: argparse.Namespace) -> int:
    rows: list[tuple[str, VersionRow]] = []
    missing: list[str] = []
    for name, content in await find_package(session, args.package, args.catalog):
        channel = args.channel or (content.package.default_channel if content.package else "")
        found = versions_of(content, channel)
        if found is None:
            channels = ", ".join(sorted(c.name for c in content.channels)) or "none"
            missing.append(
                f"catalog {name!r} has no channel {channel!r} of {args.package!r} (channels: {channels})"
            )
            continue
        rows.extend((name, row) for row in found)
    if not rows:
        raise CommandFailed("; ".join(missing))
    data = [{"catalog": name, **row.to_dict()} for name, row in rows]
    _emit(session, args.output, data, render.versions_table(rows))
    return 0


COMMANDS: dict[str, Command] = {
    "catalog add": catalog_add,
    "catalog update": catalog_update,
    "catalog remove": catalog_remove,
    "catalog list": catalog_list,
    "search": search,
    "package show": package_show,
    "package versions": package_versions,
}
