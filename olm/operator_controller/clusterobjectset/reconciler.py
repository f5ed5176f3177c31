"""The ClusterObjectSet reconciler: a list of named steps over one state object.

Active revision:   resolve_identity -> ensure_finalizer -> resolve_sources -> verify_digests
                   -> find_siblings -> roll_out, then (after the status is written, when the
                   rollout succeeded) archive_predecessors
Archived revision: resolve_identity -> resolve_sources -> release -> drop_finalizer
Being deleted:     the archived steps, tolerant of a missing identity or missing sources (the
                   objects' ownerReferences then leave the clean-up to the garbage collector).

Each step returns `CONTINUE` or `STOP`, leaving an `Outcome` (or a requeue) behind when it stops;
the status is written once at the end, from the outcome. No step may replace the revision's spec
(`_keeping_spec` checks it after each one): every step reads the spec the reconcile started from.

An active revision that has not yet succeeded is reconciled again on every event of its objects
until its probes pass; until then it keeps what one reconcile decoded from its Secrets, which of
its objects were found already applied and what their drift informers' JSON parsed to (`_Memo`),
and the next reconcile reuses them.
"""

from __future__ import annotations

import contextlib
import datetime
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from olm.api import conditions as api
from olm.api import names, ownership, revisions
from olm.api.extensionspec import RemovalPolicy
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller import revision_owners
from olm.operator_controller.clusterobjectset import probes, status, teardown
from olm.operator_controller.clusterobjectset.identity import (
    Identity,
    MissingIdentity,
    identity_for,
    named_account,
)
from olm.operator_controller.clusterobjectset.options import Options
from olm.operator_controller.clusterobjectset.rollout import Applied, Parsed, Rollout
from olm.operator_controller.clusterobjectset.sources import (
    Decoded,
    ResolvedPhase,
    SourceError,
    SourceMissing,
    changed_phases,
    resolve_phases,
)
from olm.operator_controller.clusterobjectset.status import Outcome, OutcomeKind
from olm.operator_controller.clusterobjectset.watches import DriftWatches
from olm.operator_controller.identity_policy import IdentityPolicy
from olm_runtime import cache, conditions, controller, events, finalizers, ownerrefs
from olm_runtime.client import Client, CredentialError, GroupVersionKind, errors, kinds
from olm_runtime.controller import CONTINUE, STOP, Next, Steps
from olm_runtime.controller.steps import Step
from olm_runtime.workqueue import ItemExponentialFailureRateLimiter

__all__ = ["CONTROLLER_NAME", "FIRST_ROLLOUT_POLL", "Reconciler", "RolloutPolls", "State"]

CONTROLLER_NAME = "clusterobjectset"

_log = structlog.get_logger("olm.operator_controller.clusterobjectset")

FIRST_ROLLOUT_POLL = 1.0
"""Seconds before a rolling-out revision with polled kinds looks at its objects again after what
it waits for changed (`RolloutPolls`)."""


@dataclass
class State:
    """What one reconcile learns; each field has one writer step."""

    cos: dict[str, Any]
    me: ownership.Revision
    identity: Identity | None = None
    """resolve_identity."""
    phases: list[ResolvedPhase] = field(default_factory=list)
    """resolve_sources."""
    observed_phases: list[dict[str, str]] | None = None
    """verify_digests: digests to record (first reconcile only)."""
    siblings: dict[str, ownership.Revision] = field(default_factory=dict)
    """find_siblings: other revisions of the same owner, by uid."""
    outcome: Outcome | None = None
    """Any step: what the status reports."""
    requeue_after: float | None = None
    """Any step: come back after this many seconds."""
    memo: _Memo | None = None
    """resolve_sources: what earlier reconciles of a revision rolling out kept (None once it has
    succeeded, is archived or is being deleted)."""


@dataclass
class RolloutPolls:
    """When a rolling-out revision with polled kinds looks at its objects again.

    Nothing tells the controller when a polled object changes, and a status write (which reconciles
    the revision again) happens only when what the rollout waits for changes. So it looks 1 s
    after each such change, then twice as long at each look that finds none, up to the drift poll
    interval: a rollout that moves is followed within a second or two, a stuck one costs a handful
    of looks, then one per interval."""

    waiting_for: str = ""
    """What the last look found the rollout waiting for (its outcome's message)."""
    looks: ItemExponentialFailureRateLimiter[str] = field(
        default_factory=lambda: ItemExponentialFailureRateLimiter(base_delay=FIRST_ROLLOUT_POLL)
    )
    """The delays of the looks at what it waits for, doubling since that changed."""

    def next(self, waiting_for: str, interval: float) -> float:
        """Seconds until the next look, after one that found the rollout `waiting_for` that."""
        if waiting_for != self.waiting_for:
            self.looks.forget(self.waiting_for)
            self.waiting_for = waiting_for
        return min(interval, self.looks.when(waiting_for))


@dataclass
class _Memo:
    """What the reconciles of one revision keep for the next while it rolls out."""

    uid: str
    decoded: Decoded = field(default_factory=Decoded)
    applied: Applied = field(default_factory=dict)
    parsed: Parsed = field(default_factory=dict)
    polls: RolloutPolls = field(default_factory=RolloutPolls)


def _polled_message(polled: list[GroupVersionKind], interval: float, identity: Identity) -> str:
    kinds_ = ", ".join(f"{gvk.kind}.{gvk.group or 'core'}" for gvk in polled)
    return (
        f"Drift of {kinds_} objects is checked every {interval:.0f}s by GET: "
        f"{identity.description} may not list and watch them."
    )


def _keeping_spec(step: Step[State]) -> Step[State]:
    """`step`, failing loudly if it replaced the revision's spec (steps edit status and metadata)."""

    @functools.wraps(step)
    async def checked(state: State) -> Next:
        spec = state.cos.get("spec")
        outcome = await step(state)
        if state.cos.get("spec") is not spec:
            raise RuntimeError(f"step {step.__name__} replaced the revision's spec; steps may not")
        return outcome

    return checked


def _steps(steps: tuple[Step[State], ...]) -> Steps[State]:
    return Steps(CONTROLLER_NAME, tuple(_keeping_spec(step) for step in steps))


class Reconciler:
    def __init__(
        self,
        client: Client,
        reader: cache.CacheReader,
        watches: DriftWatches,
        recorder: events.EventRecorder,
        options: Options,
    ) -> None:
        self.client = client
        self.reader = reader
        self.watches = watches
        self.recorder = recorder
        self.options = options
        self._reported_phases: set[tuple[str, str]] = set()
        self._memos: dict[str, _Memo] = {}
        """Revision name -> its memo, while it is active and has not yet succeeded."""
        self._identity_policy = IdentityPolicy(client, options.identity_policy)
        self.active_steps = _steps(
            (
                self.resolve_identity,
                self.ensure_finalizer,
                self.resolve_sources,
                self.verify_digests,
                self.find_siblings,
                self.roll_out,
            )
        )
        self.archived_steps = _steps(
            (
                self.resolve_identity,
                self.resolve_sources,
                self.release,
                self.drop_finalizer,
            )
        )

    async def reconcile(self, request: controller.Request) -> controller.Result:
        try:
            cached = await self.reader.get(CLUSTER_OBJECT_SET, request.name)
        except errors.NotFound:
            self._release_watches(request.name)
            self._memos.pop(request.name, None)
            return controller.Result()
        cos = cache.mutable_copy(cached)
        state = State(cos=cos, me=ownership.Revision.of(cos))
        if finalizers.is_being_deleted(cos):
            await self.archived_steps.run(state, key=request.name)
            if state.outcome is not None and state.outcome.kind is OutcomeKind.REMOVING:
                await self._write_status(state)
            return controller.Result(requeue_after=state.requeue_after)
        archived = (cos.get("spec") or {}).get("lifecycleState") == "Archived"
        if archived and self._archival_done(cos):
            return controller.Result()  # archived revisions stop reconciling once released
        await (self.archived_steps if archived else self.active_steps).run(state, key=request.name)
        written = await self._write_status(state)
        if (
            written
            and not archived
            and state.outcome is not None
            and state.outcome.kind is OutcomeKind.SUCCEEDED
        ):
            # Only after `Succeeded` is written: an owner reading revisions in between must never see
            # the predecessors archived and no successor that succeeded.
            await self.archive_predecessors(state)
        return controller.Result(requeue_after=state.requeue_after)

    # steps ---------------------------------------------------------------------------------------

    async def ensure_finalizer(self, state: State) -> Next:
        updated = await finalizers.ensure_finalizer(
            self.client, CLUSTER_OBJECT_SET, state.cos, names.TEARDOWN_FINALIZER
        )
        state.cos["metadata"] = dict(updated["metadata"])
        return CONTINUE

    async def drop_finalizer(self, state: State) -> Next:
        with contextlib.suppress(errors.NotFound):
            updated = await finalizers.remove_finalizer(
                self.client, CLUSTER_OBJECT_SET, state.cos, names.TEARDOWN_FINALIZER
            )
            state.cos["metadata"] = dict(updated["metadata"])  # the status write is guarded by it
        self._release_watches(state.me.name)  # it manages nothing any more
        return CONTINUE

    def _release_watches(self, revision: str) -> None:
        stopped = self.watches.release(revision)
        if stopped:
            _log.info("drift watches stopped", informers=stopped)

    async def resolve_identity(self, state: State) -> Next:
        account = named_account(state.cos)
        if account and (refusal := await self._identity_policy.refusal("act as", account)):
            state.outcome = Outcome(OutcomeKind.BLOCKED, refusal)
            state.requeue_after = self.options.retry_interval
            return STOP
        try:
            state.identity = identity_for(
                state.cos, self.client, allow_own_identity=self.options.allow_own_identity
            )
        except MissingIdentity as e:
            if self._tearing_down(state):
                if not finalizers.is_being_deleted(state.cos):
                    state.outcome = Outcome(OutcomeKind.ARCHIVED)
                return await self.drop_finalizer(state)  # nothing was ever applied as anyone
            state.outcome = Outcome(OutcomeKind.BLOCKED, str(e))
            return STOP
        return CONTINUE

    def _secret_reader(self, state: State) -> Callable[[str, str], Awaitable[dict[str, Any] | None]]:
        """Reads a referenced Secret: in the system namespace (where operator-controller writes the
        revisions' content) with the controller's identity, elsewhere (a hand-written revision's
        reference) as the revision's identity, since the controller may read no Secret there."""

        async def get(namespace: str, name: str) -> dict[str, Any] | None:
            identity = None if namespace == self.options.system_namespace else state.identity
            reader = self.client if identity is None else identity.client
            try:
                return await reader.get(kinds.SECRET, name, namespace=namespace)
            except errors.NotFound:
                return None
            except errors.Forbidden as e:
                who = "the controller" if identity is None else identity.description
                raise SourceMissing(f"cannot read secret {namespace}/{name} as {who}: {e.message}") from e
            except CredentialError as e:  # e.g. the ServiceAccount was deleted with its namespace
                raise SourceMissing(f"cannot read secret {namespace}/{name}: {e}") from e

        return get

    def _memo(self, state: State) -> _Memo | None:
        """The revision's memo while it is active and has not yet succeeded; None after (and the
        memo dropped): a revision that has rolled out is reconciled only on drift."""
        cos = state.cos
        if (
            finalizers.is_being_deleted(cos)
            or (cos.get("spec") or {}).get("lifecycleState") == "Archived"
            or status.succeeded_before(cos)
        ):
            self._memos.pop(state.me.name, None)
            return None
        memo = self._memos.get(state.me.name)
        if memo is None or memo.uid != state.me.uid:
            memo = self._memos[state.me.name] = _Memo(state.me.uid)
        return memo

    async def resolve_sources(self, state: State) -> Next:
        state.memo = memo = self._memo(state)
        try:
            state.phases = await resolve_phases(
                state.cos.get("spec") or {},
                self._secret_reader(state),
                system_namespace=self.options.system_namespace,
                limit=self.options.max_object_bytes,
                decoded=memo.decoded if memo is not None else None,
            )
        except SourceError as e:
            if self._tearing_down(state) and finalizers.is_being_deleted(state.cos):
                return await self.drop_finalizer(state)  # the garbage collector follows ownerReferences
            kind = OutcomeKind.RETRYING if isinstance(e, SourceMissing) else OutcomeKind.BLOCKED
            state.outcome = Outcome(kind, str(e))
            if kind is OutcomeKind.RETRYING:
                state.requeue_after = self.options.retry_interval
            return STOP
        return CONTINUE

    async def verify_digests(self, state: State) -> Next:
        observed = (state.cos.get("status") or {}).get("observedPhases")
        if not observed:
            state.observed_phases = [{"name": p.name, "digest": p.digest} for p in state.phases]
            return CONTINUE
        changed = changed_phases(state.phases, observed)
        if changed is not None:
            state.outcome = Outcome(OutcomeKind.BLOCKED, changed)
            return STOP
        return CONTINUE

    async def find_siblings(self, state: State) -> Next:
        if state.me.owner is None:
            return CONTINUE
        owner = revision_owners.key(*state.me.owner)
        for other in await self.reader.list(CLUSTER_OBJECT_SET, index=(revision_owners.INDEX, owner)):
            revision = ownership.Revision.of(other)
            if revision.uid != state.me.uid:
                state.siblings[revision.uid] = revision
        return CONTINUE

    async def roll_out(self, state: State) -> Next:
        assert state.identity is not None
        rollout = Rollout(
            state.identity.client,
            self.watches,
            field_manager=self.options.field_manager,
            concurrency=self.options.apply_concurrency,
            identity=state.identity.description,
            on_phase_done=lambda phase: self._phase_done(state, phase),
            applied=state.memo.applied if state.memo is not None else None,
            parsed=state.memo.parsed if state.memo is not None else None,
            rolling_out=state.memo is not None,
        )
        checks = (*probes.BUILTIN, *probes.from_spec((state.cos.get("spec") or {}).get("progressionProbes")))
        try:
            outcome = await rollout.run(state.me, state.siblings, state.phases, checks)
        except CredentialError as e:
            outcome = Outcome(OutcomeKind.RETRYING, str(e))
        polled = self.watches.polled(state.me.name)
        if polled and outcome.kind in (OutcomeKind.SUCCEEDED, OutcomeKind.ROLLING_OUT):
            # Nothing tells this controller when those objects change (drift, or a probe that now
            # passes): it looks again, by GET.
            interval = self.options.drift_poll_interval
            state.requeue_after = interval
            if outcome.kind is OutcomeKind.ROLLING_OUT and state.memo is not None:
                state.requeue_after = state.memo.polls.next(outcome.message, interval)
            if outcome.kind is OutcomeKind.SUCCEEDED:
                outcome = Outcome(
                    OutcomeKind.SUCCEEDED, detail=_polled_message(polled, interval, state.identity)
                )
        state.outcome = outcome
        if outcome.kind is OutcomeKind.RETRYING:
            state.requeue_after = self.options.retry_interval
            if outcome.message.startswith("revision object collisions"):
                self.recorder.event(state.cos, events.WARNING, "Collision", outcome.message)
        return CONTINUE if outcome.kind is OutcomeKind.SUCCEEDED else STOP

    def _phase_done(self, state: State, phase: str) -> None:
        key = (state.me.uid, phase)
        if key not in self._reported_phases:
            self._reported_phases.add(key)
            # Phases passing again after a restart are not news once the revision has succeeded.
            if status.succeeded_before(state.cos):
                return
            self.recorder.event(
                state.cos,
                events.NORMAL,
                "PhaseSucceeded",
                f'phase "{phase}" is applied and passes its probes',
            )

    async def archive_predecessors(self, state: State) -> None:
        for sibling_uid, sibling in state.siblings.items():
            if sibling.number >= state.me.number:
                continue
            try:
                current = await self.reader.get(CLUSTER_OBJECT_SET, sibling.name)
            except errors.NotFound:
                continue
            if (current.get("spec") or {}).get("lifecycleState") != "Active" or (
                (current.get("metadata") or {}).get("uid") != sibling_uid
            ):
                continue
            with contextlib.suppress(errors.NotFound):
                await self.client.patch(
                    CLUSTER_OBJECT_SET, sibling.name, {"spec": {"lifecycleState": "Archived"}}
                )
                self.recorder.event(
                    current,
                    events.NORMAL,
                    "Archived",
                    f"superseded by revision {state.me.number} ({state.me.name})",
                )

    @staticmethod
    def _archival_done(cos: dict[str, Any]) -> bool:
        progressing = conditions.find((cos.get("status") or {}).get("conditions") or [], api.TYPE_PROGRESSING)
        released = progressing is not None and progressing.get("reason") == api.REASON_ARCHIVED
        return released and not finalizers.has_finalizer(cos, names.TEARDOWN_FINALIZER)

    def _tearing_down(self, state: State) -> bool:
        spec = state.cos.get("spec") or {}
        return finalizers.is_being_deleted(state.cos) or spec.get("lifecycleState") == "Archived"

    def _removal_policy(self, state: State) -> RemovalPolicy | None:
        """The owner's removal policy, once it is deleting this revision with itself."""
        if not finalizers.is_being_deleted(state.cos):
            return None
        value = ((state.cos.get("metadata") or {}).get("annotations") or {}).get(
            names.REMOVAL_POLICY_ANNOTATION
        )
        try:
            return RemovalPolicy(value) if value else None
        except ValueError:
            return None

    def _report_kept(self, state: State, kept: teardown.KeptCRD) -> None:
        message = f"kept CRD {kept.name} and its custom resources (removal policy Retain)" + (
            f"; {kept.conversion}" if kept.conversion else ""
        )
        self.recorder.event(state.cos, events.NORMAL, "KeptCRD", message)
        owner = ownerrefs.controller_of(state.cos)
        if owner is not None:
            # The extension is what people look at; its Events outlive this revision.
            involved = {
                "apiVersion": owner.get("apiVersion"),
                "kind": owner.get("kind"),
                "metadata": {"name": owner.get("name"), "uid": owner.get("uid")},
            }
            self.recorder.event(involved, events.NORMAL, "KeptCRD", message)

    async def release(self, state: State) -> Next:
        assert state.identity is not None
        policy = self._removal_policy(state)
        try:
            progress = await teardown.release_all(state.identity.client, state.me, state.phases, policy)
        except (errors.Forbidden, errors.Unauthorized, CredentialError) as e:
            if finalizers.is_being_deleted(state.cos) and policy is RemovalPolicy.RETAIN:
                # The garbage collector would follow the CRDs' ownerReferences and delete every
                # custom resource: wait for the identity, or for the owner to choose Cascade.
                state.outcome = Outcome(
                    OutcomeKind.REMOVING,
                    f"cannot keep the CRDs: {state.identity.description} cannot act ({e}); restore it, "
                    "or set spec.removal.policy to Cascade to let everything be deleted",
                )
                state.requeue_after = self.options.retry_interval
                return STOP
            if finalizers.is_being_deleted(state.cos):
                # The ServiceAccount is gone or lost its rights (often deleted with its namespace
                # first): the managed objects' ownerReferences let the garbage collector finish.
                _log.info("identity unusable; leaving clean-up to the garbage collector", error=str(e))
                return await self.drop_finalizer(state)
            state.outcome = Outcome(OutcomeKind.RETRYING, f"cannot release objects: {e}")
            state.requeue_after = self.options.retry_interval
            return STOP
        except errors.APIError as e:
            state.outcome = Outcome(OutcomeKind.RETRYING, f"cannot release objects: {e}")
            state.requeue_after = self.options.retry_interval
            return STOP
        for kept in progress.kept:
            self._report_kept(state, kept)
        if not progress.done:
            if progress.waiting:
                state.outcome = Outcome(OutcomeKind.REMOVING, progress.waiting)
            state.requeue_after = self.options.teardown_interval
            return STOP
        if not finalizers.is_being_deleted(state.cos):
            state.outcome = Outcome(OutcomeKind.ARCHIVED)
        return CONTINUE

    # status --------------------------------------------------------------------------------------

    def _record_rollout_events(
        self,
        state: State,
        existing: list[dict[str, Any]],
        updated: list[dict[str, Any]],
        minutes: int | None,
    ) -> None:
        """The Events of a condition change whose message is upstream's, with what ours adds: the
        kinds whose drift is polled once rolled out, every object failing probes (the condition
        names the first), and for a passed deadline the revision's number and what it waits for."""
        assert state.outcome is not None
        detail = state.outcome.detail

        def said(found: list[dict[str, Any]], kind: str) -> tuple[Any, Any]:
            condition = conditions.find(found, kind) or {}
            return condition.get("reason"), condition.get("message")

        progressed = said(updated, api.TYPE_PROGRESSING)
        if (
            detail
            and progressed[0] == api.REASON_SUCCEEDED
            and progressed != said(existing, api.TYPE_PROGRESSING)
        ):
            self.recorder.event(state.cos, events.NORMAL, "DriftPolled", detail)
        available = said(updated, api.TYPE_AVAILABLE)
        if (
            detail
            and available[0] == api.REASON_PROBE_FAILURE
            and available != said(existing, api.TYPE_AVAILABLE)
        ):
            self.recorder.event(state.cos, events.NORMAL, api.REASON_PROBE_FAILURE, detail)
        exceeded = api.REASON_PROGRESS_DEADLINE_EXCEEDED
        before, after = said(existing, api.TYPE_PROGRESSING)[0], said(updated, api.TYPE_PROGRESSING)[0]
        if after == exceeded and before != exceeded:
            message = (
                f"revision {state.me.number} ({state.me.name}) has not rolled out within {minutes} minute(s) "
                f"of its creation; last status: {detail or state.outcome.message}"
            )
            self.recorder.event(state.cos, events.WARNING, exceeded, message)

    async def _write_status(self, state: State) -> bool:
        """Write the outcome's conditions; whether the status now says them (False: the revision
        changed or went away since it was read)."""
        if state.outcome is None:
            return True
        current = state.cos.get("status") or {}
        existing = current.get("conditions") or []
        now = datetime.datetime.now(datetime.UTC)
        spec = state.cos.get("spec") or {}
        due = status.deadline(state.cos, self.options.deadline_minute_seconds)
        if (
            due is not None
            and now < due
            and state.outcome.kind in (OutcomeKind.ROLLING_OUT, OutcomeKind.RETRYING)
        ):
            remaining = (due - now).total_seconds() + 0.5
            state.requeue_after = min(state.requeue_after or remaining, remaining)
        updated = status.apply_outcome(
            existing,
            state.outcome,
            name=revisions.message_name(state.cos),
            generation=(state.cos.get("metadata") or {}).get("generation"),
            due=due if state.outcome.kind is not OutcomeKind.ARCHIVED else None,
            minutes=spec.get("progressDeadlineMinutes"),
            now=now,
        )
        patch: dict[str, Any] = {}
        if updated != existing:
            patch["conditions"] = updated
        if state.observed_phases is not None and state.outcome.kind is not OutcomeKind.BLOCKED:
            patch["observedPhases"] = state.observed_phases
        if not patch:
            return True
        # Guarded by the resourceVersion the conditions were computed from: a reconcile that read a
        # cache not yet showing this controller's previous write would otherwise write that status
        # again with new transition times. The write that made it stale brings a fresh reconcile.
        version = (state.cos.get("metadata") or {}).get("resourceVersion")
        try:
            await self.client.patch_status(
                CLUSTER_OBJECT_SET,
                state.me.name,
                {"metadata": {"resourceVersion": version}, "status": patch},
            )
        except (errors.NotFound, errors.Conflict):
            return False
        if not conditions.is_true(existing, api.TYPE_SUCCEEDED) and conditions.is_true(
            updated, api.TYPE_SUCCEEDED
        ):
            self.recorder.event(
                state.cos, events.NORMAL, "Succeeded", f"revision {state.me.number} rolled out"
            )
        if state.outcome.kind is OutcomeKind.ARCHIVED and not any(
            c.get("reason") == api.REASON_ARCHIVED for c in existing
        ):
            self.recorder.event(state.cos, events.NORMAL, "Archived", "objects released or deleted")
        self._record_rollout_events(state, existing, updated, spec.get("progressDeadlineMinutes"))
        return True
