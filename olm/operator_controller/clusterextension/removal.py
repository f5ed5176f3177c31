"""Removing a ClusterExtension: its revisions first (their teardown removes the content, and keeps or
deletes the CRDs as `spec.removal.policy` says), then the Secrets, the unpacked bundle and the
finalizers that held the extension until all of that was done. While the revisions' teardown waits
(a cascading removal waiting on custom resources' finalizers), the extension's `Progressing`
condition says on what."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from olm.api import conditions as api
from olm.api import names
from olm.api import revisions as api_revisions
from olm.api.extensionspec import RemovalPolicy, SpecError, removal_policy
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.operator_controller.applier import revisions
from olm.operator_controller.clusterextension.state import Context
from olm.operator_controller.clusterextension.steps import MAX_NAME_LENGTH
from olm_runtime import conditions, controller, events, finalizers
from olm_runtime.client import Client, errors

__all__ = ["FINALIZERS", "Removal", "ensure_finalizers"]

FINALIZERS = (names.CLEANUP_UNPACK_CACHE_FINALIZER, names.CLEANUP_CONTENT_MANAGER_CACHE_FINALIZER)


async def ensure_finalizers(client: Client, extension: dict[str, Any]) -> dict[str, Any]:
    """The extension with every finalizer of `FINALIZERS`, added where missing."""
    for finalizer in FINALIZERS:
        extension = dict(await finalizers.ensure_finalizer(client, CLUSTER_EXTENSION, extension, finalizer))
    return extension


def _teardown_message(revision: Mapping[str, Any]) -> str:
    """What a revision's teardown says it waits on (its `Progressing` reason `Removing`), or ""."""
    found = conditions.find((revision.get("status") or {}).get("conditions") or [], api.TYPE_PROGRESSING)
    if found is None or found.get("reason") != api.REASON_REMOVING:
        return ""
    return str(found.get("message") or "")


class Removal:
    """Finalizes extensions being deleted, over one controller's `Context`."""

    def __init__(self, context: Context) -> None:
        self.context = context

    async def finalize(self, extension: dict[str, Any]) -> controller.Result:
        """Mark the revisions with the removal policy and delete them (their teardown removes the
        content, CRDs as the policy says), report what they wait on, then let the extension go."""
        context = self.context
        name = extension["metadata"]["name"]
        try:
            policy = removal_policy(extension)
        except SpecError:
            policy = RemovalPolicy.RETAIN  # an unknown value: the choice that deletes no data
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
            waiting: list[str] = []
            for revision in owned:
                metadata = revision.object.get("metadata") or {}
                with contextlib.suppress(errors.NotFound):
                    if (metadata.get("annotations") or {}).get(
                        names.REMOVAL_POLICY_ANNOTATION
                    ) != policy.value:
                        # Before the delete: the teardown must never run without the policy.
                        await context.client.patch(
                            CLUSTER_OBJECT_SET,
                            revision.name,
                            {"metadata": {"annotations": {names.REMOVAL_POLICY_ANNOTATION: policy.value}}},
                        )
                    if not metadata.get("deletionTimestamp"):
                        await context.client.delete(CLUSTER_OBJECT_SET, revision.name)
                if message := _teardown_message(revision.object):
                    waiting.append(f"revision {revision.number}: {message}")
            await self._report(extension, policy, "\n".join(waiting))
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
        kept = "CRDs and their custom resources kept" if policy is RemovalPolicy.RETAIN else "CRDs deleted"
        context.recorder.event(
            extension,
            events.NORMAL,
            "Removed",
            f"revisions and their content deleted; {kept} (removal policy {policy.value})",
        )
        return controller.Result()

    async def _report(self, extension: dict[str, Any], policy: RemovalPolicy, waiting: str) -> None:
        """`Progressing` True/`Removing` with what the removal waits on; an Event when that changes."""
        message = f"Removing the extension (removal policy {policy.value})" + (
            f": {waiting}" if waiting else "."
        )
        items = [dict(c) for c in (extension.get("status") or {}).get("conditions") or []]
        changed = conditions.set_condition(
            items,
            api.TYPE_PROGRESSING,
            "True",
            reason=api.REASON_REMOVING,
            message=message,
            observed_generation=extension["metadata"].get("generation"),
        )
        if not changed:
            return
        self.context.recorder.event(extension, events.NORMAL, "Removing", message)
        with contextlib.suppress(errors.NotFound, errors.Conflict):
            await self.context.client.patch_status(
                CLUSTER_EXTENSION, extension["metadata"]["name"], {"status": {"conditions": items}}
            )
