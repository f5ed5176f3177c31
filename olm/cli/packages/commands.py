"""`olmctl search` and `olmctl package show|versions`: what the serving catalogs offer.

    olmctl search green
    olmctl package show kube-green
    olmctl package versions kube-green --channel alpha -o json

Every serving catalog is read in full (`olm.cli.catalogs.serving`, or only `--catalog`); what is
printed is computed by `summary` and laid out by `text`.
"""

from __future__ import annotations

import argparse

from olm.cli import render
from olm.cli.catalogs import serving
from olm.cli.commands import CommandFailed
from olm.cli.packages import text
from olm.cli.packages.summary import PackageSummary, VersionRow, matches, summarize, versions_of
from olm.cli.session import Session

__all__ = ["package_show", "package_versions", "search"]


def _all_summaries(contents: serving.Contents) -> list[PackageSummary]:
    return [
        summarize(catalog, package)
        for catalog, packages in sorted(contents.packages.items())
        for package in packages.values()
        if not package.empty
    ]


async def search(session: Session, args: argparse.Namespace) -> int:
    contents = await serving.read(session, await serving.cluster_catalogs(session, args.catalog))
    serving.warn_failed(session, contents)
    found = [s for s in _all_summaries(contents) if matches(s, args.text)]
    if not found and args.output == "table":
        print(f"No package matches {args.text!r} in the serving catalogs.", file=session.err)
    else:
        table = render.table(
            ["CATALOG", "PACKAGE", "DEFAULT CHANNEL", "LATEST VERSION", "DISPLAY NAME"],
            [[s.catalog, s.package, s.default_channel, s.latest_version, s.display_name] for s in found],
        )
        render.emit(session.out, args.output, [s.to_dict() for s in found], table)
    return 1 if contents.failed else 0


async def package_show(session: Session, args: argparse.Namespace) -> int:
    summaries = [
        summarize(name, content)
        for name, content in await serving.find_package(session, args.package, args.catalog)
    ]
    shown = "\n".join(text.package_text(s) for s in summaries)
    render.emit(session.out, args.output, [s.to_dict() for s in summaries], shown)
    return 0


async def package_versions(session: Session, args: argparse.Namespace) -> int:
    rows: list[tuple[str, VersionRow]] = []
    missing: list[str] = []
    for name, content in await serving.find_package(session, args.package, args.catalog):
        channel = args.channel or (content.package.default_channel if content.package else "")
        channels = ", ".join(sorted(c.name for c in content.channels)) or "none"
        if not channel:
            missing.append(
                f"catalog {name!r} names no default channel of {args.package!r}: pass --channel "
                f"(channels: {channels})"
            )
            continue
        found = versions_of(content, channel)
        if found is None:
            missing.append(
                f"catalog {name!r} has no channel {channel!r} of {args.package!r} (channels: {channels})"
            )
            continue
        rows.extend((name, row) for row in found)
    if not rows:
        raise CommandFailed("; ".join(missing))
    data = [{"catalog": name, **row.to_dict()} for name, row in rows]
    render.emit(session.out, args.output, data, text.versions_table(rows))
    return 0
