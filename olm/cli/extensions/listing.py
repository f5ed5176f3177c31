"""`olmctl list`: the installed ClusterExtensions with version, channels and health; the same row
is what `install` and `upgrade` print once they are done.

    olmctl list
    olmctl list -o yaml
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from olm.api import conditions as api
from olm.api.kinds import CLUSTER_EXTENSION
from olm.cli import render
from olm.cli.session import Session
from olm_runtime import conditions

__all__ = ["extension_row", "extension_rows_table", "list_extensions", "print_installed"]


def extension_row(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What `list` shows of one ClusterExtension."""
    spec = obj.get("spec") or {}
    catalog = (spec.get("source") or {}).get("catalog") or {}
    bundle = (((obj.get("status") or {}).get("install") or {}).get("bundle")) or {}
    found = (obj.get("status") or {}).get("conditions") or ()
    installed = conditions.find(found, api.TYPE_INSTALLED) or {}
    progressing = conditions.find(found, api.TYPE_PROGRESSING) or {}
    return {
        "name": obj["metadata"]["name"],
        "package": catalog.get("packageName", ""),
        "version": bundle.get("version", ""),
        "bundle": bundle.get("name", ""),
        "versionRange": catalog.get("version", ""),
        "channels": list(catalog.get("channels") or []),
        "namespace": spec.get("namespace", ""),
        "installed": {k: installed.get(k, "") for k in ("status", "reason", "message")},
        "progressing": {k: progressing.get(k, "") for k in ("status", "reason", "message")},
    }


def _health(cond: Mapping[str, Any]) -> str:
    if not cond.get("status"):
        return ""
    return f"{cond['status']} ({cond['reason']})" if cond.get("reason") else str(cond["status"])


def extension_rows_table(rows: Sequence[Mapping[str, Any]]) -> str:
    return render.table(
        ["NAME", "PACKAGE", "VERSION", "CHANNELS", "NAMESPACE", "INSTALLED", "PROGRESSING"],
        [
            [
                r["name"],
                r["package"],
                r["version"],
                ",".join(r["channels"]) or "*",
                r["namespace"],
                _health(r["installed"]),
                _health(r["progressing"]),
            ]
            for r in rows
        ],
    )


def print_installed(session: Session, output: str, obj: dict[str, Any], data: dict[str, Any] | None) -> None:
    """The installed extension's row (`data`: the preview, for the machine formats too)."""
    row = extension_row(obj)
    if output == "table":
        session.out.write(extension_rows_table([row]))
    else:
        session.out.write(render.dump({**(data or {}), "extension": row}, output))


async def list_extensions(session: Session, args: argparse.Namespace) -> int:
    found = await session.client.list(CLUSTER_EXTENSION)
    rows = sorted((extension_row(o) for o in found.items), key=lambda r: str(r["name"]))
    if args.output != "table":
        session.out.write(render.dump(rows, args.output))
    elif not rows:
        print("No ClusterExtensions found.", file=session.err)
    else:
        session.out.write(extension_rows_table(rows))
    return 0
