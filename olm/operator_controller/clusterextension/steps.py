"""The steps of a ClusterExtension reconcile, each a call into one stage of the install pipeline.

Every step reads and writes the reconcile's `State` and returns `CONTINUE` or `STOP`; a step that
fails records a `Failure` (and, when retrying may help, a requeue) and stops. `reconciler` lists
them in the order they run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import signal
import time
from typing import Any

import structlog

from olm import semver
from olm.api import conditions as api
from olm.api import names
from olm.api import revisions as api_revisions
from olm.api.extensionspec import CRDUpgradeSafetyEnforcement, OnFailure, Readiness
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_OBJECT_SET, OPERATOR_CONDITION
from olm.api.revisions import BundleRef, Revision, RevisionStates, RollbackRecord
from olm.operator_controller import applier, metrics, revision_owners
from olm.operator_controller.applier import revisions
from olm.operator_controller.clusterextension.memo import Rendered, recorded, render_key, renderer, stored_key
from olm.operator_controller.clusterextension.options import Installer
from olm.operator_controller.clusterextension.state import Context, State
from olm.operator_controller.clusterextension.status import Failure
from olm.operator_controller.identity_policy import IdentityPolicy
from olm.pipeline import plan
from olm.pipeline.preflight import verdicts
from olm.pipeline.render import CertManagerProvider
from olm.pipeline.resolve import Installed, ResolvedBundle
from olm.pipeline.unpack import pinned
from olm_runtime import conditions, events, tracing
from olm_runtime.client import errors, kinds
from olm_runtime.controller import CONTINUE, STOP, Next

__all__ = ["MAX_NAME_LENGTH", "Pipeline"]

MAX_NAME_LENGTH = 63
"""Longest extension name: it is a label value (the API itself allows 253 characters)."""
INSTALLER_SUGGESTION = "installer"
"""The ServiceAccount name the hold message of an extension without one suggests."""
KUBERNETES_VERSION_TTL = 300.0
"""Seconds the cluster's Kubernetes version is reused: a cluster upgrade shows within that."""
_log = structlog.get_logger("olm.operator_controller.clusterextension")


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


_LABEL_VALUE = re.compile(r"^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")


def _revision_labels(state: State) -> dict[str, str]:
    """Owner labels, and the package name and bundle version as labels too (upstream's seeds select
    revisions with them), each only when it is a valid label value (`1.0.0+build` is not)."""
    assert state.bundle is not None
    labels = {
        names.OWNER_KIND_LABEL: names.CLUSTER_EXTENSION,
        names.OWNER_NAME_LABEL: state.extension["metadata"]["name"],
    }
    for key, value in (
        (names.PACKAGE_NAME_LABEL, state.bundle.package),
        (names.BUNDLE_VERSION_LABEL, state.bundle.version),
    ):
        if value and _LABEL_VALUE.match(value):
            labels[key] = value
    return labels


def _revision_annotations(state: State) -> dict[str, str]:
    """What a revision says of its bundle, its source image reference (a bundle image source) and
    identity, the bundle's properties when known, and what its content was rendered from."""
    assert state.bundle is not None
    annotations = {**_bundle_annotations(state.bundle, state.image), **_identity_annotations(state)}
    if state.properties is not None:
        annotations[names.PROPERTIES_ANNOTATION] = state.properties
    if state.render_key is not None:
        annotations[names.RENDER_KEY_ANNOTATION] = state.render_key
    if state.spec.bundle is not None:
        annotations[names.BUNDLE_SOURCE_ANNOTATION] = state.spec.bundle.ref
    return annotations


def _identity_annotations(state: State) -> dict[str, str]:
    assert state.installer is not None  # check_service_account runs before any revision is made
    return {
        names.SERVICE_ACCOUNT_NAME_ANNOTATION: state.installer.name,
        names.SERVICE_ACCOUNT_NAMESPACE_ANNOTATION: state.installer.namespace,
    }


def _installer_required(state: State) -> str:
    """Why an extension without `spec.serviceAccount` is held, and the commands that let it go on."""
    namespace, catalog = state.spec.namespace, state.spec.catalog
    create = f"kubectl -n {namespace} create serviceaccount {INSTALLER_SUGGESTION}"
    if catalog is not None:
        # The extension's name is part of the names of the RBAC objects its bundle gets.
        name = state.extension["metadata"]["name"]
        extension = f" --extension-name {name}" if name != catalog.package_name else ""
        version = f" --version '{catalog.version}'" if catalog.version else ""
        grant = (
            f"`{create}` and `olmctl rbac {catalog.package_name} --namespace {namespace} "
            f"--service-account {INSTALLER_SUGGESTION}{extension}{version} | kubectl apply -f -`"
        )
    else:
        grant = f"`{create}` and grant it the permissions the bundle needs"
    return (
        "spec.serviceAccount is not set and operator-controller has no --default-service-account: "
        f"extensions are installed only as a ServiceAccount granted for them. Run {grant}, then set "
        f"spec.serviceAccount.name: {INSTALLER_SUGGESTION}"
    )


def _again(installed: BundleRef) -> ResolvedBundle:
    """The installed bundle as the one to reconcile (no catalog offers anything allowed)."""
    return ResolvedBundle(
        package=installed.package,
        name=installed.name,
        version=installed.version,
        image=installed.image,
        catalog="",
    )


def _properties_of(revision: Revision) -> str | None:
    annotations = (revision.object.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(names.PROPERTIES_ANNOTATION)
    return str(value) if value is not None else None


def _generation(state: State) -> int:
    return int(state.extension["metadata"].get("generation") or 0)


def _report_held(state: State, held: plan.Held) -> None:
    """`held` is the step `status.update.held` reports (the rest of what resolution found stays)."""
    updates = state.updates or plan.Updates(available=None, held=None, unreachable_approval=None)
    state.updates = dataclasses.replace(updates, held=held)


def _same_version(text: str, wanted: semver.Version) -> bool:
    try:
        return semver.parse_version(text) == wanted
    except semver.VersionError:
        return False


def _for_bundle(state: State, message: str) -> str:
    assert state.bundle is not None
    return plan.for_bundle(state.bundle, message)


class Pipeline:
    """The steps, over one controller's `Context`."""

    def __init__(self, context: Context) -> None:
        self.client = context.client
        self.reader = context.reader
        self.recorder = context.recorder
        self.options = context.options
        self.memory = context.memory
        self.sources = plan.Sources(
            cluster_catalogs=functools.partial(context.reader.list, CLUSTER_CATALOG),
            read_package=context.catalog_client.get_package,
            unpacker=context.unpacker,
            client=context.client,
            certificates=CertManagerProvider() if context.options.bundle_webhooks else None,
        )
        self._renderer = renderer(
            system_namespace=context.options.system_namespace, bundle_webhooks=context.options.bundle_webhooks
        )
        self._kubernetes_version: tuple[float, semver.Version | None] | None = None
        self._identity_policy = IdentityPolicy(context.client, context.options.identity_policy)

    async def _cluster_version(self) -> semver.Version | None:
        now = time.monotonic()
        if self._kubernetes_version is None or now - self._kubernetes_version[0] > KUBERNETES_VERSION_TTL:
            self._kubernetes_version = (now, await plan.kubernetes_version(self.client))
        return self._kubernetes_version[1]

    def _fail(self, state: State, reason: str, message: str, *, retry: bool = True, detail: str = "") -> Next:
        state.failure = Failure(reason=reason, message=message, detail=detail)
        if retry:
            state.requeue_after = self.options.retry_interval
        return STOP

    def _refused(self, state: State, refused: plan.Refused) -> Next:
        return self._fail(state, refused.reason, refused.message, retry=refused.retry, detail=refused.detail)

    async def check_name(self, state: State) -> Next:
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
        return CONTINUE

    async def read_revisions(self, state: State) -> Next:
        """Read the revisions; prune archived ones beyond the retention limit; once per process and
        extension, sweep Secrets a crash left behind."""
        name = state.extension["metadata"]["name"]
        owner = revision_owners.key(names.CLUSTER_EXTENSION, name)
        listed = await self.reader.list(CLUSTER_OBJECT_SET, index=(revision_owners.INDEX, owner))
        state.states = api_revisions.states(listed, state.extension["metadata"]["uid"])
        pruned = await revisions.prune_archived(self.client, state.states.all, self.options.retention_limit)
        if pruned:
            secrets = await revisions.delete_secrets(
                self.client, name, pruned, system_namespace=self.options.system_namespace
            )
            _log.info("archived revisions deleted", extension=name, revisions=pruned, secrets=secrets)
            state.states = RevisionStates(all=tuple(r for r in state.states.all if r.name not in pruned))
        if name not in self.memory.swept:
            swept = await revisions.sweep(
                self.client, name, state.states.all, system_namespace=self.options.system_namespace
            )
            if swept.deleted or swept.adopted:
                _log.info(
                    "revision secrets swept", extension=name, deleted=swept.deleted, adopted=swept.adopted
                )
            self.memory.swept.add(name)
        return CONTINUE

    async def check_service_account(self, state: State) -> Next:
        """The ServiceAccount content is applied as must exist: the spec's, else the default
        installer; with neither, the extension is held until its spec names one.

        Read from a metadata-only informer (only existence matters), so a steady reconcile sends no
        request; an account the informer has not seen (yet: created a moment ago) is asked of the
        API server before the reconcile fails."""
        if state.spec.service_account is not None:
            state.installer = Installer(state.spec.namespace, state.spec.service_account)
            named = (state.installer.namespace, state.installer.name)
            if refusal := await self._identity_policy.refusal("install as", named):
                return self._fail(state, api.REASON_BLOCKED, refusal)
        elif self.options.default_installer is not None:
            state.installer = self.options.default_installer
        else:
            message = _installer_required(state)
            self.recorder.event(state.extension, events.WARNING, "ServiceAccountRequired", message)
            return self._fail(state, api.REASON_BLOCKED, message, retry=False)
        namespace, account = state.installer.namespace, state.installer.name
        try:
            try:
                await self.reader.get(kinds.SERVICE_ACCOUNT, account, namespace=namespace, metadata_only=True)
            except errors.NotFound:
                await self.client.get(kinds.SERVICE_ACCOUNT, account, namespace=namespace)
        except errors.NotFound:
            return self._fail(
                state,
                api.REASON_RETRYING,
                f'service account "{account}" not found in namespace "{namespace}": unable to authenticate '
                "with the Kubernetes cluster.",
            )
        return CONTINUE

    async def roll_back_failed(self, state: State) -> Next:
        """`spec.upgrade.onFailure: Rollback`: when the newest revision did not roll out within its
        progress deadline, the content of the installed revision before it is read back from its
        ClusterObjectSet and rolled out as a new revision that records the failure (then `pack`
        and the preflights as for any content: the CRD check compares the restored CRDs with the
        cluster's). A revision that is itself a rollback is never rolled back: that would loop."""
        if state.spec.upgrade.on_failure is not OnFailure.ROLLBACK:
            return CONTINUE
        latest, installed = state.states.latest, state.states.installed
        if (
            latest is None
            or installed is None
            or latest.name == installed.name
            or latest.rollback is not None
        ):
            return CONTINUE
        progressing = conditions.find(latest.conditions, api.TYPE_PROGRESSING) or {}
        if progressing.get("reason") != api.REASON_PROGRESS_DEADLINE_EXCEEDED:
            return CONTINUE
        assert installed.bundle is not None
        assert latest.bundle is not None
        if await self._restore_from(state, installed, "cannot roll back") is STOP:
            return STOP
        state.rollback = RollbackRecord(
            failed_bundle=latest.bundle.name,
            failed_version=latest.bundle.version,
            reason=api.REASON_PROGRESS_DEADLINE_EXCEEDED,
            generation=_generation(state),
        )
        for step in (self.pack, self.preflight, self.check_permissions, self.apply):
            if await step(state) is STOP:
                return STOP
        self.recorder.event(
            state.extension,
            events.WARNING,
            "RolledBack",
            f'bundle "{latest.bundle.name}" ({latest.bundle.version}) did not roll out within '
            f"spec.progressDeadlineMinutes (revision {latest.name}); rolling back to the content of "
            f'revision {installed.name}, bundle "{installed.bundle.name}" ({installed.bundle.version})',
        )
        return STOP

    async def hold_rolled_back(self, state: State) -> Next:
        """After an automatic rollback, the failed bundle is not tried again by itself: while the
        spec is the one it failed with, the extension keeps the restored content (nothing is
        rendered again) and the bundle shows as held. A spec edit, such as approving that version,
        or a newer bundle, moves on."""
        latest = state.states.latest
        record = latest.rollback if latest is not None else None
        bundle = state.bundle
        assert bundle is not None
        if record is None or bundle.name != record.failed_bundle:
            return CONTINUE
        if _generation(state) != record.generation:
            return CONTINUE
        message = (
            f'bundle "{bundle.name}" ({bundle.version}) did not roll out within spec.progressDeadlineMinutes '
            "and was rolled back; it is not tried again until the spec changes (for example "
            f"spec.upgrade.approvedVersion: {bundle.version}) or a newer bundle is offered"
        )
        _report_held(state, plan.Held(bundle=bundle, reason=api.REASON_ROLLED_BACK, message=message))
        return STOP

    async def resolve(self, state: State) -> Next:
        """Gather the selected catalogs' content and pick the bundle (`plan.gather`, `plan.choose`).

        Always, even while a revision is rolling out: a stuck rollout never stops a move to a newer
        or different version. If no selected catalog can be read and something is installed, the
        installed bundle is used again, so spec changes (configuration, preflight) still apply
        while the catalog is away.
        """
        installed = state.states.installed
        installed_bundle = installed.bundle if installed is not None else None
        request = plan.Request(
            extension=state.extension["metadata"]["name"],
            spec=state.spec,
            installed=Installed(name=installed_bundle.name, version=installed_bundle.version)
            if installed_bundle is not None
            else None,
        )
        try:
            with tracing.span("clusterextension/gather_catalogs"):
                gathered = await plan.gather(self.sources, state.spec)
            if not gathered.contents and installed_bundle is not None:
                _log.info("no catalog available; reconciling the installed bundle", skipped=gathered.skipped)
                state.bundle = _again(installed_bundle)
                return CONTINUE
            choice = plan.choose(request, gathered, cluster=await self._cluster_version())
        except plan.Refused as refused:
            # A resolution failure's detail says catalog by catalog why nothing was found, and what
            # to change; the Event carries it beside upstream's condition message.
            return self._refused(state, refused)
        state.updates = choice.updates
        if choice.resolution is None:
            assert installed_bundle is not None  # a first install is never held
            state.bundle = _again(installed_bundle)
            return CONTINUE
        resolution = choice.resolution
        state.bundle = resolution.bundle
        state.deprecation = resolution.deprecation
        name = request.extension
        installed_name = installed_bundle.name if installed_bundle is not None else None
        if self.memory.newly_resolved(name, resolution.bundle.name, installed_name):
            self.recorder.event(
                state.extension,
                events.NORMAL,
                "Resolved",
                f'resolved bundle "{resolution.bundle.name}" version {resolution.bundle.version} from '
                f'catalog "{resolution.bundle.catalog}"',
            )
        return CONTINUE

    async def resolve_image(self, state: State) -> Next:
        """`spec.source.bundle`: the bundle is the image's (`plan.fetch_image`), with no catalog and
        no upgrade graph. A digest is pulled once (then cached); a tag stands for the digest the
        newest revision recorded for it until its poll interval passes, when it is pulled again and
        new content is an update like any other (the later steps check it the same way)."""
        source = state.spec.bundle
        assert source is not None  # the reconciler runs this step only then
        name = state.extension["metadata"]["name"]
        digest = pinned(source.ref)
        interval = source.poll_interval_minutes if digest is None else None  # a digest is never polled
        image = digest or self._tag_image(state, name, source.ref, interval)
        request = plan.Request(extension=name, spec=state.spec)
        try:
            bundle, unpacked = await plan.fetch_image(self.sources.unpacker, request, image)
        except plan.Refused as refused:
            return self._refused(state, refused)
        if image == source.ref and digest is None:  # the tag itself was pulled
            self.memory.tag_checked[name] = (source.ref, time.monotonic())
            if interval is not None:  # the next check
                state.requeue_after = interval * self.options.poll_minute_seconds
        state.bundle = bundle
        state.image = unpacked.image
        state.registry_v1 = unpacked.bundle
        state.properties = unpacked.bundle.csv.annotations.get(names.PROPERTIES_ANNOTATION)
        if state.states.installed is not None:
            followed = (
                f"its tag is checked for new content every {interval} minute(s)"
                if interval is not None
                else "new content is installed when spec.source.bundle.ref changes"
            )
            graph = "no catalog and no upgrade graph apply"
            note = f"the source is a bundle image ({source.ref}): {graph}; {followed}"
            state.updates = plan.Updates(available=None, held=None, unreachable_approval=None, no_graph=note)
        return CONTINUE

    def _tag_image(self, state: State, name: str, ref: str, interval: int | None) -> str:
        """What to pull for the tag `ref`: the digest the newest revision recorded for it (installed
        or still rolling out) while no check is due (and come back when one is), else the tag."""
        latest = state.states.latest
        annotations = ((latest.object.get("metadata") or {}).get("annotations") or {}) if latest else {}
        known = latest.bundle.image if latest is not None and latest.bundle is not None else None
        if known is None or annotations.get(names.BUNDLE_SOURCE_ANNOTATION) != ref:
            return ref
        if interval is None:
            return known
        checked = self.memory.tag_checked.get(name)
        period = interval * self.options.poll_minute_seconds
        elapsed = time.monotonic() - checked[1] if checked is not None and checked[0] == ref else period
        if elapsed >= period:
            return ref
        state.requeue_after = period - elapsed
        return known

    async def restore(self, state: State) -> Next:
        """`spec.upgrade.rollbackTo`: the objects of the newest revision that installed that version,
        read back from its ClusterObjectSet, become the content to roll out (then `pack` and the
        preflights as for any content: the CRD check compares the restored CRDs with the cluster's,
        which is the upgrade-safety check in reverse). No catalog is read and nothing is pulled."""
        version = state.spec.upgrade.rollback_to
        assert version is not None  # the reconciler runs this step only then
        wanted = semver.parse_version(version)
        installed_once = [r for r in state.states.all if r.succeeded and r.bundle is not None]
        done = [r for r in installed_once if r.bundle is not None and _same_version(r.bundle.version, wanted)]
        if not done:
            kept = sorted({r.bundle.version for r in installed_once if r.bundle is not None})
            message = (
                f"spec.upgrade.rollbackTo {version}: no revision of this extension installed that version "
                f"(revisions kept: {', '.join(kept) or 'none'}); set it to one of those, or remove it"
            )
            return self._fail(state, api.REASON_BLOCKED, message, retry=False)
        return await self._restore_from(state, done[-1], f"spec.upgrade.rollbackTo {version}")

    async def _restore_from(self, state: State, source: Revision, why: str) -> Next:
        """Make `source`'s objects, read back from its ClusterObjectSet and Secrets, the content to
        roll out, as the bundle it installed; `why` leads the failure when its content is gone."""
        assert source.bundle is not None
        try:
            state.objects = await revisions.revision_objects(
                self.client, source.object, system_namespace=self.options.system_namespace
            )
        except errors.NotFound as err:
            message = f"{why}: the content of revision {source.name} is gone: {err}"
            return self._fail(state, api.REASON_BLOCKED, message, retry=False)
        state.bundle = _again(source.bundle)
        state.image = source.bundle.image
        state.properties = _properties_of(source)
        return CONTINUE

    async def reuse_revision(self, state: State) -> Next:
        """End a steady reconcile before the bundle is even read: when the render inputs are those
        the newest active revision's content was computed from (`memo`), only its bundle
        annotations are brought up to date, as `pack` would after rendering and packing the same
        content again. A bundle named by tag takes the full path (only a pull tells its digest)."""
        assert state.bundle is not None
        image = pinned(state.bundle.image)
        latest = state.states.latest
        if image is None or latest is None:
            return CONTINUE
        name = state.extension["metadata"]["name"]
        key = render_key(image, state.spec)
        rendered = self.memory.render.lookup(name, key)
        if rendered is None and (rendered := recorded(latest, key, self._renderer)) is not None:
            self.memory.render.remember(name, key, rendered)  # an earlier process rendered it
        if rendered is None or rendered.digest != latest.digest:
            return CONTINUE
        state.image = image
        state.properties = rendered.properties
        await self._refresh_annotations(state, latest)
        return STOP

    async def unpack(self, state: State) -> Next:
        """Pull the bundle (cached by digest) and read it as registry+v1 (`plan.fetch`)."""
        assert state.bundle is not None
        request = plan.Request(extension=state.extension["metadata"]["name"], spec=state.spec)
        try:
            unpacked = await plan.fetch(self.sources.unpacker, request, state.bundle)
        except plan.Refused as refused:
            return self._refused(state, refused)
        state.image = unpacked.image
        state.registry_v1 = unpacked.bundle
        # The CSV's annotation of the same name, with metadata/properties.yaml merged in on load.
        state.properties = unpacked.bundle.csv.annotations.get(names.PROPERTIES_ANNOTATION)
        return CONTINUE

    async def render(self, state: State) -> Next:
        """Render the bundle for the spec's namespace and configuration (`plan.render`)."""
        assert state.bundle is not None
        assert state.registry_v1 is not None
        try:
            state.objects = plan.render(
                state.spec, state.bundle, state.registry_v1, self.sources.certificates
            )
        except plan.Refused as refused:
            return self._refused(state, refused)
        return CONTINUE

    async def check_permission_growth(self, state: State) -> Next:
        """An update whose Roles and ClusterRoles grant more than the installed revision's waits
        for approval (`plan.grown`). Meanwhile the installed bundle is reconciled as it is, so a
        change of its configuration still applies (`_hold`)."""
        installed = state.states.installed
        bundle = state.bundle
        assert bundle is not None
        if installed is None or installed.bundle is None:
            return CONTINUE
        request = plan.Request(
            extension=state.extension["metadata"]["name"],
            spec=state.spec,
            installed=Installed(name=installed.bundle.name, version=installed.bundle.version),
        )
        if not plan.growth_gated(request, bundle):
            return CONTINUE
        try:
            installed_roles = await revisions.revision_objects(
                self.client, installed.object, "roles", system_namespace=self.options.system_namespace
            )
        except errors.NotFound as err:
            message = f"cannot read the roles of the installed revision {installed.name}: {err}"
            return self._fail(state, api.REASON_RETRYING, message)
        held = plan.grown(request, bundle, state.objects, installed_roles)
        if held is None:
            return CONTINUE
        return await self._hold(state, held)

    async def check_readiness(self, state: State) -> Next:
        """An update waits while the installed operator's OperatorCondition says it is not
        upgradeable (`plan.unready`; `spec.upgrade.readiness: Respect`). Under `Ignore` the signal
        is reported in a Warning Event and the update goes on. Meanwhile the installed bundle is
        reconciled as it is, as under the permission-growth gate."""
        installed = state.states.installed
        bundle = state.bundle
        assert bundle is not None
        if installed is None or installed.bundle is None:
            return CONTINUE
        request = plan.Request(
            extension=state.extension["metadata"]["name"],
            spec=state.spec,
            installed=Installed(name=installed.bundle.name, version=installed.bundle.version),
        )
        if not plan.readiness_gated(request, bundle):
            return CONTINUE  # before the cache is read: most reconciles are no update at all
        held = plan.unready(request, bundle, await self._operator_condition(state, installed))
        if held is None:
            return CONTINUE
        if state.spec.upgrade.readiness is Readiness.IGNORE:
            message = f"spec.upgrade.readiness is Ignore, so the update goes on: {held.message}"
            self.recorder.event(state.extension, events.WARNING, "ReadinessIgnored", message)
            return CONTINUE
        return await self._hold(state, held)

    async def _operator_condition(self, state: State, installed: Revision) -> dict[str, Any] | None:
        """The installed revision's OperatorCondition, from the cache: the one that revision
        applied, else the one named after its bundle."""
        name = state.extension["metadata"]["name"]
        selector = api_revisions.owner_selector(name)
        found = await self.reader.list(
            OPERATOR_CONDITION, namespace=state.spec.namespace, label_selector=selector
        )
        labelled = [
            c
            for c in found
            if (c["metadata"].get("labels") or {}).get(names.REVISION_NAME_LABEL) == installed.name
        ]
        bundle = installed.bundle.name if installed.bundle is not None else None
        named = [c for c in found if c["metadata"]["name"] == bundle]
        chosen = labelled or named
        return dict(chosen[0]) if chosen else None

    async def _hold(self, state: State, held: plan.Held) -> Next:
        """Keep the installed bundle while `held` waits: report it, and carry on with the installed
        bundle's content, from the render memo when nothing changed (`reuse_revision`), else
        unpacked and rendered again."""
        installed = state.states.installed
        assert installed is not None
        assert installed.bundle is not None
        _report_held(state, held)
        state.bundle = _again(installed.bundle)
        for step in (self.reuse_revision, self.unpack, self.render):
            if await step(state) is STOP:
                return STOP
        return CONTINUE

    async def pack(self, state: State) -> Next:
        """Externalise the objects into content-addressed Secrets.

        When the newest active revision already holds this content, only its bundle annotations are
        brought up to date and the pipeline ends: the checks after this concern content about to be
        rolled out, so a steady reconcile skips them.
        """
        name = state.extension["metadata"]["name"]
        try:
            state.packed = applier.pack(
                f"{name}-{state.states.next_number}",
                name,
                state.objects,
                applier.PackingOptions(system_namespace=self.options.system_namespace),
            )
        except applier.PackingError as err:
            return self._fail(state, api.REASON_BLOCKED, _for_bundle(state, str(err)), retry=False)
        state.digest = revisions.content_digest(state.packed, state.spec.progress_deadline_minutes)
        if state.registry_v1 is not None:  # rendered here; restored content is no render of the key
            rendered = Rendered(digest=state.digest, properties=state.properties)
            key = render_key(state.image, state.spec)
            self.memory.render.remember(name, key, rendered)
            state.render_key = stored_key(key, self._renderer, rendered)
        latest = state.states.latest
        if latest is None or latest.digest != state.digest:
            return CONTINUE  # an older active revision with this content is not reused: it is being replaced
        await self._refresh_annotations(state, latest)
        return STOP

    async def _refresh_annotations(self, state: State, revision: Revision) -> None:
        assert state.bundle is not None
        wanted = _revision_annotations(state)
        metadata = revision.object.get("metadata") or {}
        have = metadata.get("annotations") or {}
        changed: dict[str, str | None] = {k: v for k, v in wanted.items() if have.get(k) != v}
        have_labels = metadata.get("labels") or {}
        wanted_labels = _revision_labels(state)
        labels: dict[str, str | None] = {k: v for k, v in wanted_labels.items() if have_labels.get(k) != v}
        for key in (names.PACKAGE_NAME_LABEL, names.BUNDLE_VERSION_LABEL):
            if key in have_labels and key not in wanted_labels:
                labels[key] = None  # the new version is not a valid label value: no stale one stays
        if names.BUNDLE_SOURCE_ANNOTATION in have and names.BUNDLE_SOURCE_ANNOTATION not in wanted:
            changed[names.BUNDLE_SOURCE_ANNOTATION] = None  # now from a catalog: the tag no longer applies
        if (
            revision.rollback is not None
            and revision.bundle is not None
            and revision.bundle.name != state.bundle.name
        ):
            # The same content now stands for another bundle: it no longer restores anything.
            changed[names.ROLLBACK_ANNOTATION] = None
        if not changed and not labels:
            return
        with contextlib.suppress(errors.NotFound):
            updated = await self.client.patch(
                CLUSTER_OBJECT_SET, revision.name, {"metadata": {"annotations": changed, "labels": labels}}
            )
            state.states = RevisionStates(
                all=tuple(Revision.of(updated) if r.name == revision.name else r for r in state.states.all)
            )

    async def preflight(self, state: State) -> Next:
        """CRD upgrade safety against the CRDs that exist (unless `enforcement: None`)."""
        check = metrics.PreflightCheck.CRD_UPGRADE_SAFETY
        if state.spec.crd_upgrade_safety is CRDUpgradeSafetyEnforcement.NONE:
            metrics.preflight_ran(check, metrics.PreflightResult.SKIPPED)
            return CONTINUE
        verdict = await verdicts.check_crd_safety(self.client, state.objects)
        if not verdict.safe:
            metrics.preflight_ran(check, metrics.PreflightResult.FAILED)
            return self._fail(state, api.REASON_RETRYING, _for_bundle(state, verdict.message))
        metrics.preflight_ran(check, metrics.PreflightResult.PASSED)
        return CONTINUE

    async def check_permissions(self, state: State) -> Next:
        """The ServiceAccount may do everything the new revision needs, or every missing permission
        is reported and nothing is created."""
        check = metrics.PreflightCheck.PERMISSIONS
        assert state.installer is not None  # check_service_account set it or stopped
        # The revision `apply` creates next, which will own every object (its finalizers are checked).
        revision = f"{state.extension['metadata']['name']}-{state.states.next_number}"
        verdict = await verdicts.check_permissions(
            self.client,
            namespace=state.installer.namespace,
            service_account=state.installer.name,
            objects=state.objects,
            revision=revision,
            account_known=True,  # `check_service_account` saw it
        )
        if verdict.not_checked is not None:
            metrics.preflight_ran(check, metrics.PreflightResult.ERROR)
            return self._fail(state, api.REASON_RETRYING, _for_bundle(state, verdict.message))
        if not verdict.ok:
            metrics.preflight_ran(check, metrics.PreflightResult.FAILED)
            return self._fail(state, api.REASON_RETRYING, _for_bundle(state, verdict.message))
        metrics.preflight_ran(check, metrics.PreflightResult.PASSED)
        return CONTINUE

    async def apply(self, state: State) -> Next:
        """Secrets -> ClusterObjectSet `<extension>-<n+1>` -> the Secrets' ownerReferences."""
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
        annotations = {**_revision_annotations(state), names.CONTENT_DIGEST_ANNOTATION: state.digest}
        if state.rollback is not None:
            annotations[names.ROLLBACK_ANNOTATION] = state.rollback.annotation()
        labels = _revision_labels(state)
        try:
            created = await revisions.create_revision(
                self.client,
                extension,
                number,
                state.packed,
                labels=labels,
                annotations=annotations,
                progress_deadline_minutes=state.spec.progress_deadline_minutes,
                after_secrets=_crash if self.options.crash_after_secrets else None,
            )
        except errors.AlreadyExists:
            # Another reconcile (or a previous process) created it: read the revisions again next time.
            state.requeue_after = 1.0
            return STOP
        state.states = RevisionStates(all=(*state.states.all, Revision.of(created)))
        installed = state.states.installed
        verb = "upgrading" if installed is not None else "installing"
        if state.spec.upgrade.rollback_to is not None or state.rollback is not None:
            verb = "rolling back to"
        self.recorder.event(
            extension,
            events.NORMAL,
            "Installing",
            f'{verb} bundle "{state.bundle.name}" version {state.bundle.version} as revision {number} '
            f"({created['metadata']['name']})",
        )
        return CONTINUE
