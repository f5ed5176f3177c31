"""The ClusterExtension reconciler: resolve -> unpack -> render -> preflight -> apply -> report.

Steps run in order over one `State`; a step that fails records a `Failure` and stops the
pipeline. Whatever happened, the status is computed once at the end from the revisions and the
failure (`status.compute`), so an installed extension keeps reporting its installed bundle and
availability while, say, its catalog is gone or a newer version cannot be resolved.

- revisions: read this extension's ClusterObjectSets; prune archived ones beyond the retention
  limit; once per process and extension, sweep Secrets a crash left behind.
- service_account: the ServiceAccount content is applied as must exist.
- resolve: gather the selected catalogs' content and pick the bundle. Always, even while a
  revision is rolling out: a stuck rollout never stops a move to a newer or different version. If
  no selected catalog can be read and something is installed, the installed bundle is used again,
  so spec changes (configuration, preflight) still apply while the catalog is away.
- unpack, render: pull the bundle (cached by digest) and render it for the spec's namespace and
  configuration.
- pack: externalise the objects into content-addressed Secrets; when the newest active revision
  already holds this content, only its bundle annotations are brought up to date and the pipeline
  ends (the checks below concern content about to be rolled out, so a steady reconcile skips them).
- preflight: CRD upgrade safety against the CRDs that exist (unless `enforcement: None`).
- permissions: the ServiceAccount may do everything the new revision needs, or every missing
  permission is reported and nothing is created.
- apply: Secrets -> ClusterObjectSet `<extension>-<n+1>` -> Secret ownerReferences.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from olm import oci
from olm.api import conditions as api
from olm.api import names
from olm.api.clusterextension import ClusterExtension, CRDUpgradeSafetyEnforcement
from olm.api.kinds import CLUSTER_EXTENSION, CLUSTER_OBJECT_SET
from olm.operator_controller import applier
from olm.operator_controller.bundle.registryv1 import RegistryV1
from olm.operator_controller.bundle.render import (
    CertManagerProvider,
    InvalidConfigurationError,
    RenderError,
    manifests_for,
)
from olm.operator_controller.catalogclient import CatalogClient
from olm.operator_controller.clusterextension import catalogs, revisions, status
from olm.operator_controller.clusterextension.options import Options
from olm.operator_controller.clusterextension.revisions import (
    Revision,
    RevisionStates,
)
from olm.operator_controller.clusterextension.unpack import BundleUnpacker, UnpackError
from olm.operator_controller.preflight import crdupgradesafety, permissions
from olm.operator_controller.resolve import Deprecation, Installed, ResolutionError, ResolvedBundle, resolve
from olm_runtime import cache, conditions, controller, events, finalizers
from olm_runtime.client import Client, errors, kinds

__all__ = ["FINALIZERS", "Reconciler", "State"]

FINALIZERS = (names.CLEANUP_UNPACK_CACHE_FINALIZER, names.CLEANUP_CONTENT_MANAGER_CACHE_FINALIZER)
MAX_NAME_LENGTH = 63
"""Longest extension name: it is a label value (the API itself allows 253 characters)."""
_log = structlog.get_logger("olm.operator_controller.clusterextension")


@dataclass
class State:
    """What one reconcile learns; each field has one writer step."""

    extension: dict[str, Any]
    spec: ClusterExtension
    states: RevisionStates = field(default_factory=lambda: RevisionStates(all=()))
    """revisions (and apply, which adds the new one)."""
    bundle: ResolvedBundle | None = None
    """resolve."""
    deprecation: Deprecation | None = None
    """resolve: None when the catalog data could not be read."""
    image: str = ""
    """unpack: the bundle image by digest."""
    registry_v1: RegistryV1 | None = None
    """unpack."""
    objects: list[dict[str, Any]] = field(default_factory=list)
    """render."""
    packed: applier.PackedRevision | None = None
    digest: str = ""
    """pack."""
    failure: status.Failure | None = None
    requeue_after: float | None = None


Step = Callable[[State], Awaitable[bool]]


def _crash() -> None:
    _log.warning("crashing after the revision's Secrets, as configured for testing")
    os.kill(os.getpid(), signal.SIGKILL)


def _bundle_annotations(bundle: ResolvedBundle, image: str) -> dict[str, str]:
    return {
        names.PACKAGE_NAME_LABEL: bundle.package,
        names.BUNDLE_NAME_LABEL: bundle.name,
        names.BUNDLE_VERSION_LABEL: bundle.version,
        names.BUNDLE_REFERENCE_ANNOTATION: image,
    }


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
        self.client = client
        self.reader = reader
        self.catalog_client = catalog_client
        self.unpacker = unpacker
        self.recorder = recorder
        self.options = options
        self.certificate_provider = CertManagerProvider()
        self._swept: set[str] = set()
        self._resolved: dict[str, str] = {}
        self.steps: tuple[Step, ...] = (
            self.check_name,
            self.read_revisions,
            self.check_service_account,
            self.resolve,
            self.unpack,
            self.render,
            self.pack,
            self.preflight,
            self.check_permissions,
            self.apply,
        )

    async def reconcile(self, request: controller.Request) -> controller.Result:
        try:
            cached = await self.reader.get(CLUSTER_EXTENSION, request.name)
        except errors.NotFound:
            self._resolved.pop(request.name, None)
            return controller.Result()
        extension = cache.mutable_copy(cached)
        if finalizers.is_being_deleted(extension):
            return await self.finalize(extension)
        for finalizer in FINALIZERS:
            extension = dict(
                await finalizers.ensure_finalizer(self.client, CLUSTER_EXTENSION, extension, finalizer)
            )
        state = State(extension=extension, spec=ClusterExtension.from_dict(extension))
        for step in self.steps:
            started = time.monotonic()
            proceed = await step(state)
            _log.debug(
                "step done",
                step=step.__name__,
                extension=request.name,
                seconds=round(time.monotonic() - started, 4),
            )
            if not proceed:
                break
        await self.write_status(state)
        return controller.Result(requeue_after=state.requeue_after)

    def _fail(self, state: State, reason: str, message: str, *, retry: bool = True) -> bool:
        state.failure = status.Failure(reason=reason, message=message)
        if retry:
            state.requeue_after = self.options.retry_interval
        return False

    # steps ---------------------------------------------------------------------------------------

    async def check_name(self, state: State) -> bool:
        name = state.extension["metadata"]["name"]
        if len(name) > MAX_NAME_LENGTH:
            # The name is the value of the owner-name label of every revision, Secret and object.
            return self._fail(
                state,
                api.REASON_BLOCKED,
                f'ClusterExtension name "{name}" is {len(name)} characters long; at most {MAX_NAME_LENGTH} '
                "are supported because it is used as a label value",
                retry=False,
            )
        return True

    async def read_revisions(self, state: State) -> bool:
        name = state.extension["metadata"]["name"]
        listed = await self.reader.list(CLUSTER_OBJECT_SET, label_selector=revisions.owner_selector(name))
        state.states = revisions.states(listed, state.extension["metadata"]["uid"])
        pruned = await revisions.prune_archived(self.client, state.states.all, self.options.retention_limit)
        if pruned:
            secrets = await revisions.delete_secrets(
                self.client, name, pruned, system_namespace=self.options.system_namespace
            )
            _log.info("archived revisions deleted", extension=name, revisions=pruned, secrets=secrets)
            state.states = RevisionStates(all=tuple(r for r in state.states.all if r.name not in pruned))
        if name not in self._swept:
            swept = await revisions.sweep(
                self.client, name, state.states.all, system_namespace=self.options.system_namespace
            )
            if swept.deleted or swept.adopted:
                _log.info(
                    "revision secrets swept", extension=name, deleted=swept.deleted, adopted=swept.adopted
                )
            self._swept.add(name)
        return True

    async def check_service_account(self, state: State) -> bool:
        namespace, account = state.spec.spec.namespace, state.spec.spec.service_account.name
        try:
            await self.client.get(kinds.SERVICE_ACCOUNT, account, namespace=namespace)
        except errors.NotFound:
            return self._fail(
                state,
                api.REASON_RETRYING,
                f'service account "{account}" not found in namespace "{namespace}": unable to authenticate '
                "with the Kubernetes cluster.",
            )
        return True

    async def resolve(self, state: State) -> bool:
        source = state.spec.spec.source.catalog
        if source is None:  # the API's union rule makes this impossible; be explicit anyway
            return self._fail(state, api.REASON_BLOCKED, "spec.source.catalog is required", retry=False)
        gathered = await catalogs.gather(self.reader, self.catalog_client, source)
        installed = state.states.installed
        installed_bundle = installed.bundle if installed is not None else None
        if not gathered.contents and installed_bundle is not None:
            # No selected catalog can be read: keep the installed bundle (and apply spec changes to it).
            state.bundle = ResolvedBundle(
                package=installed_bundle.package,
                name=installed_bundle.name,
                version=installed_bundle.version,
                image=installed_bundle.image,
                catalog="",
            )
            _log.info("no catalog available; reconciling the installed bundle", skipped=gathered.skipped)
            return True
        try:
            resolution = resolve(
                source,
                Installed(name=installed_bundle.name, version=installed_bundle.version)
                if installed_bundle is not None
                else None,
                gathered.contents,
                skipped=gathered.skipped,
            )
        except ResolutionError as err:
            # The resolver names the skipped catalogs where they matter (no bundle, ambiguity).
            return self._fail(state, api.REASON_RETRYING, str(err))
        state.bundle = resolution.bundle
        state.deprecation = resolution.deprecation
        name = state.extension["metadata"]["name"]
        if self._resolved.get(name) != resolution.bundle.name:
            self._resolved[name] = resolution.bundle.name
            self.recorder.event(
                state.extension,
                events.NORMAL,
                "Resolved",
                f'resolved bundle "{resolution.bundle.name}" version {resolution.bundle.version} from '
                f'catalog "{resolution.bundle.catalog}"',
            )
        return True

    async def unpack(self, state: State) -> bool:
        assert state.bundle is not None
        try:
            unpacked = await self.unpacker.unpack(state.extension["metadata"]["name"], state.bundle.image)
        except UnpackError as err:
            return self._fail(state, api.REASON_BLOCKED, self._for_bundle(state, str(err)), retry=False)
        except oci.RegistryError as err:
            return self._fail(
                state, api.REASON_RETRYING, self._for_bundle(state, f"pulling bundle image: {err}")
            )
        state.image = unpacked.image
        state.registry_v1 = unpacked.bundle
        return True

    @staticmethod
    def _for_bundle(state: State, message: str) -> str:
        assert state.bundle is not None
        bundle = state.bundle
        return f'error for resolved bundle "{bundle.name}" with version "{bundle.version}": {message}'

    async def render(self, state: State) -> bool:
        assert state.registry_v1 is not None
        config = state.spec.spec.config
        inline = config.inline if config is not None else None
        try:
            state.objects = manifests_for(
                state.registry_v1,
                state.spec.spec.namespace,
                inline,
                certificate_provider=self.certificate_provider,
            )
        except InvalidConfigurationError as err:
            message = f"invalid ClusterExtension configuration: {err}"
            return self._fail(
                state, api.REASON_INVALID_CONFIGURATION, self._for_bundle(state, message), retry=False
            )
        except RenderError as err:
            return self._fail(state, api.REASON_BLOCKED, self._for_bundle(state, str(err)), retry=False)
        return True

    async def preflight(self, state: State) -> bool:
        install = state.spec.spec.install
        safety = install.preflight.crd_upgrade_safety if install and install.preflight else None
        if safety is not None and safety.enforcement is CRDUpgradeSafetyEnforcement.NONE:
            return True
        existing: dict[str, dict[str, Any]] = {}
        for obj in state.objects:
            if obj.get("kind") != "CustomResourceDefinition":
                continue
            crd_name = obj["metadata"]["name"]
            with contextlib.suppress(errors.NotFound):
                existing[crd_name] = await self.client.get(kinds.CUSTOM_RESOURCE_DEFINITION, crd_name)
        try:
            crdupgradesafety.check(state.objects, existing)
        except crdupgradesafety.CRDUpgradeSafetyError as err:
            return self._fail(state, api.REASON_RETRYING, self._for_bundle(state, str(err)))
        return True

    async def pack(self, state: State) -> bool:
        name = state.extension["metadata"]["name"]
        try:
            state.packed = applier.pack(
                f"{name}-{state.states.next_number}",
                name,
                state.objects,
                applier.PackingOptions(system_namespace=self.options.system_namespace),
            )
        except applier.PackingError as err:
            return self._fail(state, api.REASON_BLOCKED, self._for_bundle(state, str(err)), retry=False)
        state.digest = revisions.content_digest(state.packed, state.spec.spec.progress_deadline_minutes)
        latest = state.states.latest
        if latest is None or latest.digest != state.digest:
            return True  # an older active revision with this content is not reused: it is being replaced
        await self._refresh_annotations(state, latest)
        return False  # nothing new to roll out

    async def _refresh_annotations(self, state: State, revision: Revision) -> None:
        assert state.bundle is not None
        wanted = {**_bundle_annotations(state.bundle, state.image), **self._identity_annotations(state)}
        have = (revision.object.get("metadata") or {}).get("annotations") or {}
        changed = {k: v for k, v in wanted.items() if have.get(k) != v}
        if not changed:
            return
        with contextlib.suppress(errors.NotFound):
            updated = await self.client.patch(
                CLUSTER_OBJECT_SET, revision.name, {"metadata": {"annotations": changed}}
            )
            state.states = RevisionStates(
                all=tuple(Revision.of(updated) if r.name == revision.name else r for r in state.states.all)
            )

    @staticmethod
    def _identity_annotations(state: State) -> dict[str, str]:
        return {
            names.SERVICE_ACCOUNT_NAME_ANNOTATION: state.spec.spec.service_account.name,
            names.SERVICE_ACCOUNT_NAMESPACE_ANNOTATION: state.spec.spec.namespace,
        }

    async def check_permissions(self, state: State) -> bool:
        try:
            missing = await permissions.missing_permissions(
                self.client,
                namespace=state.spec.spec.namespace,
                service_account=state.spec.spec.service_account.name,
                objects=state.objects,
            )
        except permissions.PermissionCheckError as err:
            return self._fail(state, api.REASON_RETRYING, self._for_bundle(state, str(err)))
        if missing:
            message = str(permissions.MissingPermissionsError(missing))
            return self._fail(state, api.REASON_RETRYING, self._for_bundle(state, message))
        return True

    async def apply(self, state: State) -> bool:
        assert state.bundle is not None
        assert state.packed is not None
        extension = state.extension
        name = extension["metadata"]["name"]
        number = state.states.next_number
        await revisions.sweep(
            self.client,
            name,
            state.states.all,
            system_namespace=self.options.system_namespace,
            keep=[s["metadata"]["name"] for s in state.packed.secrets],
        )
        annotations = {
            **_bundle_annotations(state.bundle, state.image),
            **self._identity_annotations(state),
            names.CONTENT_DIGEST_ANNOTATION: state.digest,
        }
        labels = {names.OWNER_KIND_LABEL: names.CLUSTER_EXTENSION, names.OWNER_NAME_LABEL: name}
        try:
            created = await revisions.create_revision(
                self.client,
                extension,
                number,
                state.packed,
                labels=labels,
                annotations=annotations,
                progress_deadline_minutes=state.spec.spec.progress_deadline_minutes,
                after_secrets=_crash if self.options.crash_after_secrets else None,
            )
        except errors.AlreadyExists:
            # Another reconcile (or a previous process) created it: read the revisions again next time.
            state.requeue_after = 1.0
            return False
        state.states = RevisionStates(all=(*state.states.all, Revision.of(created)))
        installed = state.states.installed
        verb = "upgrading" if installed is not None else "installing"
        self.recorder.event(
            extension,
            events.NORMAL,
            "Installing",
            f'{verb} bundle "{state.bundle.name}" version {state.bundle.version} as revision {number} '
            f"({created['metadata']['name']})",
        )
        return True

    # status ----------------------------------------------------------------------------------------

    async def write_status(self, state: State) -> None:
        extension = state.extension
        current = extension.get("status") or {}
        existing = current.get("conditions") or []
        report = status.compute(
            existing,
            state.states,
            failure=state.failure,
            deprecation=state.deprecation,
            generation=(extension.get("metadata") or {}).get("generation"),
        )
        self._events(state, existing, report)
        patch: dict[str, Any] = {}
        if report.conditions != existing:
            patch["conditions"] = report.conditions
        if report.install != current.get("install"):
            patch["install"] = report.install
        if report.active_revisions != (current.get("activeRevisions") or []):
            patch["activeRevisions"] = report.active_revisions or None
        if not patch:
            return
        with contextlib.suppress(errors.NotFound):
            await self.client.patch_status(
                CLUSTER_EXTENSION, extension["metadata"]["name"], {"status": patch}
            )

    def _events(self, state: State, existing: list[dict[str, Any]], report: status.Report) -> None:
        extension = state.extension
        before = ((extension.get("status") or {}).get("install") or {}).get("bundle") or {}
        after = (report.install or {}).get("bundle") or {}
        if after and after.get("name") != before.get("name"):
            if before:
                self.recorder.event(
                    extension,
                    events.NORMAL,
                    "Upgraded",
                    f'bundle "{before.get("name")}" ({before.get("version")}) replaced by "{after["name"]}" '
                    f"({after.get('version')})",
                )
            else:
                self.recorder.event(
                    extension,
                    events.NORMAL,
                    "Installed",
                    f'bundle "{after["name"]}" version {after.get("version")} installed',
                )
        if state.failure is not None:
            old = conditions.find(existing, api.TYPE_PROGRESSING)
            if old is None or old.get("message") != status.truncate(state.failure.message):
                self.recorder.event(extension, events.WARNING, "Failed", state.failure.message)

    # removal -------------------------------------------------------------------------------------------

    async def finalize(self, extension: dict[str, Any]) -> controller.Result:
        """Delete the revisions (whose teardown removes the content), then let the extension go."""
        name = extension["metadata"]["name"]
        too_long = len(name) > MAX_NAME_LENGTH  # nothing was ever created, and no selector could name it
        listed = (
            []
            if too_long
            else await self.reader.list(CLUSTER_OBJECT_SET, label_selector=revisions.owner_selector(name))
        )
        owned = revisions.states(listed, extension["metadata"]["uid"]).all
        if owned:
            for revision in owned:
                if not (revision.object.get("metadata") or {}).get("deletionTimestamp"):
                    with contextlib.suppress(errors.NotFound):
                        await self.client.delete(CLUSTER_OBJECT_SET, revision.name)
            return controller.Result(requeue_after=2.0)
        # The Secrets would follow their revisions through the garbage collector, which may take a
        # while to notice; deleting them here makes removal complete when the extension is gone.
        if not too_long:
            await revisions.sweep(self.client, name, (), system_namespace=self.options.system_namespace)
        self.unpacker.remove(name)
        self._swept.discard(name)
        self._resolved.pop(name, None)
        current: Any = extension
        for finalizer in FINALIZERS:
            with contextlib.suppress(errors.NotFound):
                current = await finalizers.remove_finalizer(
                    self.client, CLUSTER_EXTENSION, current, finalizer
                )
        self.recorder.event(extension, events.NORMAL, "Removed", "revisions and their content deleted")
        return controller.Result()
