"""Removing a ClusterExtension: its revisions first (their teardown removes the content), then the
Secrets, the unpacked bundle and the finalizers that held the extension until all of that was done."""

from __future__ import annotations

import contextlib
from typing import Any

from olm.api import names
from olm.api import revisions as api_revisions
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.operator_controller.applier import revisions
from olm.operator_controller.clusterextension.state import Context
from olm.operator_controller.clusterextension.steps import MAX_NAME_LENGTH
from olm_runtime import controller, events, finalizers
from olm_runtime.client import Client, errors

__all__ = ["FINALIZERS", "Removal", "ensure_finalizers"]

FINALIZERS = (names.CLEANUP_UNPACK_CACHE_FINALIZER, names.CLEANUP_CONTENT_MANAGER_CACHE_FINALIZER)


async def ensure_finalizers(client: Client, extension: dict[str, Any]) -> dict[str, Any]:
    """The extension with every finalizer of `FINALIZERS`, added where missing."""
    for finalizer in FINALIZERS:
        extension = dict(await finalizers.ensure_finalizer(client, CLUSTER_EXTENSION, extension, finalizer))
    return extension


class Removal:
    """Finalizes extensions being deleted, over one controller's `Context`."""

    def __init__(self, context: Context) -> None:
        self.context = context

    async def finalize(self, extension: dict[str, Any]) -> controller.Result:
        """Delete the revisions (whose teardown removes the content), then let the extension go."""
        context = self.context
        name = extension["metadata"]["name"]
        too_long = len(name) > MAX_NAME_LENGTH  # nothing was ever created, and no selector could name it
        listed = (
            []
            if too_long
            else await context.reader.list(
                CLUSTER_OBJECT_SET, label_selector=api_revisions.owner_selector(name)
            )
        )
        owned = api_revisions.states(listed, extension["metadata"]["uid"]).all
        if owned:
            for revision in owned:
                if not (revision.object.get("metadata") or {}).get("deletionTimestamp"):
                    with contextlib.suppress(errors.NotFound):
                        await context.client.delete(CLUSTER_OBJECT_SET, revision.name)
            return controller.Result(requeue_after=2.0)
        # The Secrets would follow their revisions through the garbage collector, which may take a
        # while to notice; deleting them here makes removal complete when the extension is gone.
        if not too_long:
            await revisions.sweep(context.client, name, (), system_namespace=context.options.system_namespace)
        context.unpacker.remove(name)
        context.memory.forget(name)
        current: Any = extension
        for finalizer in FINALIZERS:
            with contextlib.suppress(errors.NotFound):
                current = await finalizers.remove_finalizer(
                    context.client, CLUSTER_EXTENSION, current, finalizer
                )
        context.recorder.event(extension, events.NORMAL, "Removed", "revisions and their content deleted")
        return controller.Result()
