"""`olmctl uninstall`: delete a ClusterExtension and wait until its content is gone.

    olmctl uninstall kube-green [--cascade]

operator-controller removes what the extension installed (its revisions, and with them its
workloads; its CRDs as `spec.removal.policy` says, which `--cascade` sets to `Cascade` first); the
wait shows what is left, counting only what this user may list, and what the removal waits on.
"""

from __future__ import annotations

import argparse
import contextlib

from olm.api import conditions as api
from olm.api import names
from olm.api.extensionspec import RemovalPolicy
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.cli.commands import not_found
from olm.cli.extensions import progress
from olm.cli.session import Session
from olm_runtime import conditions
from olm_runtime.client import errors, kinds

__all__ = ["uninstall"]


async def uninstall(session: Session, args: argparse.Namespace) -> int:
    name = args.name
    try:
        if args.cascade:
            cascade = {"spec": {"removal": {"policy": RemovalPolicy.CASCADE.value}}}
            await session.client.patch(CLUSTER_EXTENSION, name, cascade)
        await session.client.delete(CLUSTER_EXTENSION, name)
    except errors.NotFound:
        raise not_found("clusterextension", name) from None
    print(f"clusterextension/{name} deleting; waiting until its content is gone", file=session.err)
    owned = f"{names.OWNER_KIND_LABEL}={names.CLUSTER_EXTENSION},{names.OWNER_NAME_LABEL}={name}"
    display = progress.Display.for_stream(session.err)

    waits: list[str] = []

    async def remaining() -> dict[str, int]:
        try:
            extension = await session.client.get(CLUSTER_EXTENSION, name)
            left = {"clusterextension": 1}
            found = conditions.find(
                (extension.get("status") or {}).get("conditions") or [], api.TYPE_PROGRESSING
            )
            message = str((found or {}).get("message") or "")
            if found and found.get("reason") == api.REASON_REMOVING and (not waits or waits[-1] != message):
                waits.append(message)
                display.note(message)
        except errors.NotFound:
            left = {"clusterextension": 0}
        for label, gvk in (
            ("clusterobjectsets", CLUSTER_OBJECT_SET),
            ("customresourcedefinitions", kinds.CUSTOM_RESOURCE_DEFINITION),
            ("deployments", kinds.DEPLOYMENT),
        ):
            with contextlib.suppress(errors.Forbidden):  # wait only for what this user may see
                left[label] = len((await session.client.list(gvk, label_selector=owned)).items)
        return left

    shown: list[dict[str, int]] = []

    def observe(left: dict[str, int]) -> None:
        if not shown or shown[-1] != left:
            shown.append(left)
            display.note("remaining: " + ", ".join(f"{count} {kind}" for kind, count in left.items()))

    await progress.poll_until(
        remaining,
        lambda left: progress.Outcome(done=not any(left.values())),
        observe=observe,
        display=display,
        timeout=args.timeout,
        what=f"clusterextension {name} and its content to be deleted",
    )
    print(f"clusterextension/{name} uninstalled", file=session.out)
    return 0
