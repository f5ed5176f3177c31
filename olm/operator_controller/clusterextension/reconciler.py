"""The ClusterExtension reconciler: catalogs -> resolve -> unpack -> render -> preflight -> apply -> status.

The steps (`steps.Pipeline`) run in order over one `State` until one stops; a step that fails
records a `Failure`. Whatever happened, the status is written once at the end from the revisions
and the failure (`status.write`), so an installed extension keeps reporting its installed bundle
and availability while, say, its catalog is gone or a newer version cannot be resolved. An
extension being deleted is finalized instead (`removal`).
"""

from __future__ import annotations

from olm.api.extensionspec import ExtensionSpec
from olm.api.kinds import CLUSTER_EXTENSION
from olm.operator_controller import metrics
from olm.operator_controller.clusterextension import removal, status
from olm.operator_controller.clusterextension.options import Options
from olm.operator_controller.clusterextension.removal import Removal
from olm.operator_controller.clusterextension.state import Context, State
from olm.operator_controller.clusterextension.steps import Pipeline
from olm.pipeline.catalogs import CatalogClient
from olm.pipeline.unpack import BundleUnpacker
from olm_runtime import cache, controller, events, finalizers, tracing
from olm_runtime.client import Client, errors
from olm_runtime.controller import Steps

__all__ = ["CONTROLLER_NAME", "Reconciler"]

CONTROLLER_NAME = "clusterextension"


def _package(state: State) -> str:
    if state.spec.catalog is not None:
        return state.spec.catalog.package_name
    return state.bundle.package if state.bundle is not None else ""


class Reconciler:
    def __init__(
        self,
        client: Client,
        reader: cache.CacheReader,
        *,
        catalog_client: CatalogClient,
        unpacker: BundleUnpacker,
        recorder: events.EventRecorder,
        options: Options,
    ) -> None:
        self.context = Context(
            client=client,
            reader=reader,
            catalog_client=catalog_client,
            unpacker=unpacker,
            recorder=recorder,
            options=options,
        )
        self.removal = Removal(self.context)
        self.install_clock = metrics.InstallClock()
        pipeline = Pipeline(self.context)
        head = (pipeline.check_name, pipeline.read_revisions, pipeline.check_service_account)
        tail = (pipeline.pack, pipeline.preflight, pipeline.check_permissions, pipeline.apply)
        self.steps = Steps[State](
            CONTROLLER_NAME,
            (
                *head,
                pipeline.roll_back_failed,  # `onFailure: Rollback`, before anything is resolved
                pipeline.resolve,
                pipeline.hold_rolled_back,
                pipeline.reuse_revision,
                pipeline.unpack,
                pipeline.render,
                pipeline.check_permission_growth,
                pipeline.check_readiness,
                *tail,
            ),
        )
        # `spec.upgrade.rollbackTo`: content restored from a revision instead of a catalog's.
        self.restore_steps = Steps[State](CONTROLLER_NAME, (*head, pipeline.restore, *tail))
        # `spec.source.bundle`: the image is the bundle; resolving it is pulling it.
        self.image_steps = Steps[State](
            CONTROLLER_NAME,
            (
                *head,
                pipeline.roll_back_failed,
                pipeline.resolve_image,
                pipeline.hold_rolled_back,
                pipeline.reuse_revision,
                pipeline.render,
                pipeline.check_permission_growth,
                pipeline.check_readiness,
                *tail,
            ),
        )

    async def reconcile(self, request: controller.Request) -> controller.Result:
        context = self.context
        try:
            cached = await context.reader.get(CLUSTER_EXTENSION, request.name)
        except errors.NotFound:
            context.memory.resolved.pop(request.name, None)
            context.memory.render.forget(request.name)
            self.install_clock.forget(request.name)
            metrics.forget(request.name)
            return controller.Result()
        extension = cache.mutable_copy(cached)
        if finalizers.is_being_deleted(extension):
            return await self.removal.finalize(extension)
        extension = await removal.ensure_finalizers(context.client, extension)
        state = State(extension=extension, spec=ExtensionSpec.of(extension))
        if state.spec.upgrade.rollback_to is not None:
            steps = self.restore_steps
        elif state.spec.bundle is not None:
            steps = self.image_steps
        else:
            steps = self.steps
        ran = await steps.run(state, key=request.name)
        metrics.observe_resolution(ran)
        before = (extension.get("status") or {}).get("conditions") or []
        with tracing.span(f"{CONTROLLER_NAME}/status"):
            report = await status.write(
                context.client,
                context.recorder,
                state.extension,
                state.states,
                failure=state.failure,
                deprecation=state.deprecation,
                updates=state.updates,
            )
        metrics.CONDITIONS.set(request.name, report.conditions)
        available = ((report.update or {}).get("available") or {}).get("version")
        held = (report.update or {}).get("held") or {}
        installed = ((report.install or {}).get("bundle") or {}).get("version")
        metrics.set_update_available(request.name, _package(state), installed, available)
        metrics.set_update_held(request.name, held.get("version"), held.get("heldBy"))
        metrics.set_revisions(request.name, state.states)
        self.install_clock.observe(extension, before, report.conditions)
        return controller.Result(requeue_after=state.requeue_after)
