"""`olmctl rollback`: return a ClusterExtension to an earlier version's content, declaratively.

    olmctl rollback kube-green              # to the version installed before this one
    olmctl rollback kube-green --to 0.7.0

It writes `spec.upgrade.rollbackTo` (an edit of the object, which a GitOps repository can hold as
well) and waits until the restored revision is installed. operator-controller restores the
content from that version's revision, without a catalog; a rollback whose CRDs would lose stored
data is refused there, and shown here while waiting. Remove the field (`--clear`) to resume
updates.
"""

from __future__ import annotations

import argparse
from typing import Any

from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.api.revisions import owner_selector, states
from olm.cli.commands import CommandFailed
from olm.cli.extensions import listing, progress
from olm.cli.session import Session, get_extension

__all__ = ["rollback"]


async def _previous(session: Session, obj: dict[str, Any]) -> str:
    """The version of the newest revision that installed a version other than the installed one."""
    installed = ((obj.get("status") or {}).get("install") or {}).get("bundle") or {}
    listed = await session.client.list(
        CLUSTER_OBJECT_SET, label_selector=owner_selector(obj["metadata"]["name"])
    )
    revisions = states(listed.items, obj["metadata"]["uid"]).all
    earlier = [
        r.bundle.version
        for r in revisions
        if r.succeeded and r.bundle is not None and r.bundle.version != installed.get("version")
    ]
    if not earlier:
        raise CommandFailed(
            f'clusterextension "{obj["metadata"]["name"]}" has no revision of another version to roll back to'
        )
    return earlier[-1]


async def rollback(session: Session, args: argparse.Namespace) -> int:
    obj = await get_extension(session, args.name)
    if args.clear:
        await session.client.patch(CLUSTER_EXTENSION, args.name, {"spec": {"upgrade": {"rollbackTo": None}}})
        print(
            f"clusterextension/{args.name} spec.upgrade.rollbackTo removed; updates resume", file=session.err
        )
        return 0
    # The API server checks that it is a semantic version (the field's validation rule).
    version = args.to or await _previous(session, obj)
    if args.dry_run:
        print(f"would set spec.upgrade.rollbackTo to {version}", file=session.err)
        return 0
    await session.client.patch(CLUSTER_EXTENSION, args.name, {"spec": {"upgrade": {"rollbackTo": version}}})
    print(f"clusterextension/{args.name} rolling back to {version}; waiting for it", file=session.err)
    rolled = await progress.wait_installed(session, args.name, version, args.timeout)
    listing.print_installed(session, args.output, rolled, {"rollbackTo": version})
    return 0
