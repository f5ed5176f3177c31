"""`olmctl package graph`: the upgrade graph of a package as SVG or Graphviz dot.

The content is read exactly as `package show` reads it (every serving catalog, or `--catalog`); the
graph model is `upgradegraph`, drawn by `graphsvg` or `graphdot`. With
`--extension NAME` the ClusterExtension's installed bundle (`status.install.bundle.name`) is marked.
"""

from __future__ import annotations

import argparse

from olm.cli.catalogs.serving import find_package
from olm.cli.commands import CommandFailed
from olm.cli.packages import graphdot, graphsvg, upgradegraph
from olm.cli.session import Session, get_extension

__all__ = ["package_graph"]


async def package_graph(session: Session, args: argparse.Namespace) -> int:
    installed = await _installed(session, args.extension, args.package) if args.extension else ""
    found = await find_package(session, args.package, args.catalog)
    if len(found) > 1:
        names = ", ".join(name for name, _ in found)
        raise CommandFailed(
            f"package {args.package!r} is in several catalogs ({names}); choose one with --catalog"
        )
    [(catalog, content)] = found
    try:
        graph = upgradegraph.build(content, catalog, channel=args.channel, installed=installed)
    except upgradegraph.NoSuchChannel as err:
        raise CommandFailed(str(err)) from None
    if installed and graph.node(installed) is None:
        where = f"channel {args.channel!r}" if args.channel else f"catalog {catalog!r}"
        print(f"warning: the installed bundle {installed!r} is not in {where}", file=session.err)
    session.out.write(graphsvg.render(graph) if args.output == "svg" else graphdot.render(graph))
    return 0


async def _installed(session: Session, name: str, package: str) -> str:
    """The bundle ClusterExtension `name` has installed; empty (with a warning) when none yet."""
    extension = await get_extension(session, name)
    wanted = ((extension.get("spec") or {}).get("source") or {}).get("catalog", {}).get("packageName", "")
    if wanted and wanted != package:
        raise CommandFailed(f"clusterextension {name!r} installs package {wanted!r}, not {package!r}")
    bundle = str(
        (((extension.get("status") or {}).get("install") or {}).get("bundle") or {}).get("name") or ""
    )
    if not bundle:
        print(f"warning: clusterextension {name!r} has no bundle installed yet", file=session.err)
    return bundle
