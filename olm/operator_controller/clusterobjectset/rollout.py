"""Rolling out an Active revision: phase after phase, each applied whole and then probed.

For each phase, in spec order:

1. look up every object (the drift informer first, the API server when the informer does not show
   it as ours or the identity may not watch its kind; both as the revision's identity, except a
   shared drift informer, which runs as the controller) and judge it (`ownership.judge`); if any
   object collides, stop before applying anything of the phase;
2. release the references of adopted objects' previous controllers, then server-side apply every
   object (concurrently, one field manager, `force` so our fields win) as the revision's identity;
3. probe the objects as the apply returned them; the next phase starts only if all pass.

Before the first phase of a revision that has not yet succeeded, the drift informers of every
later phase's kinds are started in the background (`DriftWatches.prefetch`), except kinds the
revision's own CRDs define: a phase then finds them synced rather than reviewing access and opening
a watch of each new kind in turn. Such a revision's phases do not wait for a watch either: an object
whose informer is not synced yet is read by GET, as one absent from it would be, and the rollout
waits for every watch it looked up only once it has applied what it could (`_settle`), so a watch
that cannot start is still reported, and the objects of a new install are applied while their
watches open instead of after (kube-green's first object went out 1 ms into the revision's first
reconcile instead of 23 ms, in the audit log of `hack.bench.install.floor`).

The result is an `Outcome`: `Succeeded` when every phase passed, `RollingOut` naming (as upstream
does) the first object of the phase that fails its probes, with every failing object in its
detail, `Retrying` with collisions or errors (forbidden writes, unknown kinds).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from olm.api import names, ownership
from olm.operator_controller.clusterobjectset import probes
from olm.operator_controller.clusterobjectset.sources import ResolvedObject, ResolvedPhase
from olm.operator_controller.clusterobjectset.status import Outcome, OutcomeKind
from olm.operator_controller.clusterobjectset.watches import DriftWatches, WatchUnavailable
from olm_runtime import cache, ownerrefs, tracing
from olm_runtime.client import Client, GroupVersionKind, NoKindMatch, PatchType, errors
from olm_runtime.client.client import object_kind

__all__ = [
    "Applied",
    "Parsed",
    "PhaseFailed",
    "Rollout",
    "collision_message",
    "fingerprint",
    "probe_detail",
    "probe_message",
]

MAX_LISTED = 10
"""Objects named in one status message; the rest are counted."""


Applied = MutableMapping[tuple[GroupVersionKind, str, str], tuple[Any, ...]]
"""(kind, namespace, name) -> the `fingerprint` of the live object when it was last found already
applied, for a revision's next rollout (the reconciler keeps one per revision until it succeeds)."""
Parsed = MutableMapping[tuple[GroupVersionKind, str, str], tuple[bytes, Mapping[str, Any]]]
"""(kind, namespace, name) -> the JSON a compact drift informer held for the object and what it
parsed to, while the revision rolls out (`Rollout._live`)."""
_VOLATILE_METADATA = frozenset({"resourceVersion", "managedFields", "generation"})


def fingerprint(desired: Mapping[str, Any], live: Mapping[str, Any]) -> tuple[Any, ...]:
    """What `ownership.already_applied(desired, live, ...)` depends on in `live`: while it stays the
    same, so does the answer. That comparison walks every field of the desired object (a CRD's
    schema runs to tens of thousands of values) and is asked again on every event of the revision's
    objects until its probes pass, while only their status changes. Where `desired` holds nothing
    but metadata and spec and `live` has a generation, which every change of spec raises, the
    generation and the metadata stand for the object, so status updates keep the fingerprint;
    otherwise its resourceVersion does."""
    meta = live.get("metadata") or {}
    generation = meta.get("generation")
    if generation is not None and set(desired) <= {"apiVersion", "kind", "metadata", "spec"}:
        rest = {k: v for k, v in meta.items() if k not in _VOLATILE_METADATA}
        return (meta.get("uid"), generation, orjson.dumps(rest, option=orjson.OPT_SORT_KEYS))
    return (meta.get("uid"), meta.get("resourceVersion"))


def only_objects(phases: Sequence[ResolvedPhase]) -> dict[tuple[str, str | None], str]:
    """(apiVersion and kind, namespace) -> name, for each kind and namespace where the revision has
    exactly one object: its drift watch names it (`DriftWatches.lookup`)."""
    names: dict[tuple[str, str | None], list[str]] = {}
    for phase in phases:
        for source in phase.objects:
            names.setdefault(_kind_here(source.manifest), []).append(_name(source.manifest)[0])
    return {key: found[0] for key, found in names.items() if len(found) == 1 and found[0]}


def _only(only: Mapping[tuple[str, str | None], str], manifest: Mapping[str, Any]) -> str | None:
    return only.get(_kind_here(manifest))


def _kind_here(manifest: Mapping[str, Any]) -> tuple[str, str | None]:
    """(apiVersion and kind, namespace) of a manifest, as `only_objects` keys them."""
    return f"{manifest.get('apiVersion')}/{manifest.get('kind')}", _name(manifest)[1]


def _prefetched(
    phases: Sequence[ResolvedPhase], only: Mapping[tuple[str, str | None], str]
) -> Iterator[tuple[GroupVersionKind, str | None, str | None]]:
    """The (kind, namespace, name if the revision's only one: `only_objects`) of every object after
    the first phase (which looks its kinds up at once), but for kinds the revision's CRDs define:
    not served before their phase is done."""
    defined: set[tuple[str, str]] = set()
    for phase in phases:
        for source in phase.objects:
            manifest = source.manifest
            if manifest.get("kind") == "CustomResourceDefinition":
                spec = manifest.get("spec") or {}
                defined.add((str(spec.get("group")), str((spec.get("names") or {}).get("kind"))))
    for phase in phases[1:]:
        for source in phase.objects:
            try:
                gvk = object_kind(source.manifest)
            except ValueError:
                continue  # reported by the phase's own lookup
            if (gvk.group, gvk.kind) not in defined:
                yield gvk, _name(source.manifest)[1], _only(only, source.manifest)


class PhaseFailed(Exception):
    """An object of a phase could not be looked up, released or applied."""


_LOOKUP_FAILURES = (ValueError, NoKindMatch, WatchUnavailable)
"""What looking up an object's kind and watch raises that its phase reports (`_plan`, `_settle`)."""


def _phase_failed(phase: str, problem: object) -> Outcome:
    return Outcome(OutcomeKind.RETRYING, f'phase "{phase}": {problem}')


@dataclass(frozen=True)
class _Planned:
    source: ResolvedObject
    gvk: GroupVersionKind
    verdict: ownership.Verdict
    live: Mapping[str, Any] | None


def _listing(lines: Sequence[str]) -> str:
    shown = sorted(lines)[:MAX_LISTED]
    more = len(lines) - len(shown)
    return "\n".join(f"- {line}" for line in shown) + (f"\n- and {more} more" if more else "")


def collision_message(phase: str, lines: Sequence[str]) -> str:
    return f'revision object collisions in phase "{phase}":\n{_listing(lines)}'


def probe_message(obj: Mapping[str, Any], messages: Sequence[str]) -> str:
    """Available's message while `obj` fails its probes, in upstream's words: `Object`, the kind
    and apiVersion, `namespace/name` (`/name` for a cluster-scoped object), and each failing check."""
    name, namespace = _name(obj)
    return (
        f"Object {obj.get('kind')}.{obj.get('apiVersion')} {namespace or ''}/{name}: {' and '.join(messages)}"
    )


def probe_detail(phase: str, lines: Sequence[str]) -> str:
    """The Event's account of a phase that is not ready: every object failing probes."""
    return f'Phase "{phase}" is not ready:\n{_listing(lines)}'


def _name(manifest: Mapping[str, Any]) -> tuple[str, str | None]:
    metadata = manifest.get("metadata") or {}
    return str(metadata.get("name") or ""), metadata.get("namespace") or None


class Rollout:
    """One reconcile's rollout of one revision, writing as `client` (the revision's identity)."""

    def __init__(
        self,
        client: Client,
        watches: DriftWatches,
        *,
        field_manager: str,
        concurrency: int,
        identity: str,
        on_phase_done: Callable[[str], None],
        applied: Applied | None = None,
        parsed: Parsed | None = None,
        rolling_out: bool = False,
    ) -> None:
        """`applied` and `parsed`: what a revision still rolling out keeps between reconciles.
        `rolling_out`: the revision has not yet succeeded, so its later phases' watches start now
        and its phases apply without waiting for any watch (one that has succeeded has them
        running, and walks its phases again only on drift)."""
        self.client = client
        self.watches = watches
        self.field_manager = field_manager
        self.identity = identity
        self.on_phase_done = on_phase_done
        self.applied: Applied = {} if applied is None else applied
        self.parsed: Parsed = {} if parsed is None else parsed
        self.rolling_out = rolling_out
        self._slots = asyncio.Semaphore(concurrency)
        self._unwaited: dict[tuple[GroupVersionKind, str | None, str | None], tuple[str, str]] = {}
        """(kind, namespace, only name) looked up without waiting for its watch -> (phase, label)
        of the first object that did, for `_settle`."""

    async def run(
        self,
        me: ownership.Revision,
        siblings: Mapping[str, ownership.Revision],
        phases: Sequence[ResolvedPhase],
        checks: Sequence[probes.Probe],
    ) -> Outcome:
        only = only_objects(phases)
        if self.rolling_out:
            self.watches.prefetch(me, self.client, self.identity, _prefetched(phases, only))
        outcome = await self._walk(me, siblings, phases, checks, only)
        unavailable = await self._settle(me)
        return unavailable or outcome

    async def _settle(self, me: ownership.Revision) -> Outcome | None:
        """Wait for the watches looked up without waiting: a reconcile ends with every watch it
        relies on synced (or reported), as one that waited for each would."""
        looked = list(self._unwaited.items())
        self._unwaited.clear()
        results = await asyncio.gather(
            *(
                self.watches.lookup(me, self.client, self.identity, gvk, namespace, name=only)
                for (gvk, namespace, only), _ in looked
            ),
            return_exceptions=True,
        )
        for (_, (phase, label)), result in zip(looked, results, strict=True):
            if isinstance(result, _LOOKUP_FAILURES):
                return _phase_failed(phase, f"{label}: {result}")
            if isinstance(result, BaseException):
                raise result
        return None

    async def _walk(
        self,
        me: ownership.Revision,
        siblings: Mapping[str, ownership.Revision],
        phases: Sequence[ResolvedPhase],
        checks: Sequence[probes.Probe],
        only: Mapping[tuple[str, str | None], str],
    ) -> Outcome:
        for phase in phases:
            # One span per phase; its probes get their own, so a rollout waiting on a probe shows
            # which phase and how many objects are not there yet.
            with tracing.span(
                f"clusterobjectset/phase {phase.name}", {"phase": phase.name, "objects": len(phase.objects)}
            ):
                try:
                    planned = await asyncio.gather(
                        *(
                            self._plan(o, me, siblings, _only(only, o.manifest), phase.name)
                            for o in phase.objects
                        )
                    )
                except PhaseFailed as e:
                    return _phase_failed(phase.name, e)
                collisions = [
                    f"{probes.object_label(p.source.manifest)} {p.verdict.message}"
                    for p in planned
                    if p.verdict.action is ownership.Action.COLLISION
                ]
                if collisions:
                    return Outcome(OutcomeKind.RETRYING, collision_message(phase.name, collisions))
                results = await asyncio.gather(*(self._apply(p, me) for p in planned), return_exceptions=True)
                problems = [str(r) for r in results if isinstance(r, PhaseFailed)]
                for result in results:
                    if isinstance(result, BaseException) and not isinstance(result, PhaseFailed):
                        raise result
                if problems:
                    return Outcome(OutcomeKind.RETRYING, f'phase "{phase.name}":\n{_listing(problems)}')
                with tracing.span(
                    f"clusterobjectset/probe {phase.name}", {"phase": phase.name}
                ) as probe_span:
                    # In spec order: upstream names the first failing object of the phase.
                    failing = [
                        (obj, messages)
                        for obj in results
                        if isinstance(obj, dict) and (messages := probes.check(obj, checks))
                    ]
                    probe_span.set_attribute("failing", len(failing))
                if failing:
                    lines = [
                        f"{probes.object_label(obj)}: {' and '.join(messages)}" for obj, messages in failing
                    ]
                    return Outcome(
                        OutcomeKind.ROLLING_OUT,
                        probe_message(*failing[0]),
                        detail=probe_detail(phase.name, lines),
                    )
                self.on_phase_done(phase.name)
        return Outcome(OutcomeKind.SUCCEEDED)

    async def _plan(
        self,
        source: ResolvedObject,
        me: ownership.Revision,
        siblings: Mapping[str, ownership.Revision],
        only: str | None,
        phase: str,
    ) -> _Planned:
        """`only`: the object's name if it is the revision's only one of its kind and namespace."""
        manifest = source.manifest
        label = probes.object_label(manifest)
        name, namespace = _name(manifest)
        if not name:
            raise PhaseFailed(f"{label}: metadata.name is required")
        wait = not self.rolling_out
        try:
            gvk = object_kind(manifest)
            watched = await self.watches.lookup(
                me, self.client, self.identity, gvk, namespace, name=only, wait=wait
            )
        except _LOOKUP_FAILURES as e:
            raise PhaseFailed(f"{label}: {e}") from e
        if not wait:
            self._unwaited.setdefault((gvk, namespace, only), (phase, label))
        namespace = namespace if watched.resource.namespaced else None
        if watched.resource.namespaced and not namespace:
            raise PhaseFailed(f"{label}: metadata.namespace is required for a namespaced kind")
        live = self._live(watched.informer, gvk, name, namespace) if watched.informer else None
        verdict = ownership.judge(live, me, siblings, source.collision_protection)
        if live is None or verdict.action not in (ownership.Action.APPLY, ownership.Action.SKIP):
            async with self._slots:
                try:
                    live = await self.client.get(gvk, name, namespace=namespace)
                except errors.NotFound:
                    live = None
                except errors.APIError as e:
                    raise PhaseFailed(self._denied("get", label, e)) from e
            verdict = ownership.judge(live, me, siblings, source.collision_protection)
        return _Planned(source, gvk, verdict, live)

    def _live(
        self, informer: cache.Informer, gvk: GroupVersionKind, name: str, namespace: str | None
    ) -> Mapping[str, Any] | None:
        """The informer's object, parsed once per version while the revision rolls out. A compact
        informer parses a copy per read, and each reconcile of a rolling-out revision reads every
        object of the phases it walks: for sailoperator, 19 CRDs of up to 700 kB on each of about
        35 reconciles (one per CRD status change), the largest item in a CPU profile of its install.
        What is kept is shared between reconciles and never changed."""
        stored = informer.stored(name, namespace)
        if not isinstance(stored, bytes):
            return stored
        key = (gvk, namespace or "", name)
        kept = self.parsed.get(key)
        if kept is not None and kept[0] is stored:
            return kept[1]
        parsed: Mapping[str, Any] = orjson.loads(stored)
        self.parsed[key] = (stored, parsed)
        return parsed

    def _denied(self, verb: str, label: str, error: errors.APIError) -> str:
        if isinstance(error, errors.Forbidden):
            return f"cannot {verb} {label} as {self.identity}: {error.message}"
        return f"{verb} {label}: {error.message}"

    async def _apply(self, planned: _Planned, me: ownership.Revision) -> Mapping[str, Any] | None:
        verdict = planned.verdict
        if verdict.action is ownership.Action.SKIP:
            return None
        label = probes.object_label(planned.source.manifest)
        desired = ownership.desired_object(planned.source.manifest, me)
        if verdict.release is None and self._already_applied(planned, desired, me):
            # Re-applying an unchanged object costs the API server a full server-side apply (19 CRDs
            # of up to 700 kB for some bundles) on every reconcile, for nothing.
            return planned.live
        async with self._slots:
            try:
                await self._prepare(planned, me)
                applied: dict[str, Any] = await self.client.apply(
                    desired,
                    field_manager=self.field_manager,
                    force=True,
                )
                return applied
            except errors.APIError as e:
                raise PhaseFailed(self._denied("apply", label, e)) from e

    def _already_applied(self, planned: _Planned, desired: Mapping[str, Any], me: ownership.Revision) -> bool:
        live = planned.live
        if live is None:
            return False
        name, namespace = _name(desired)
        key = (planned.gvk, namespace or "", name)
        found = fingerprint(desired, live)
        if self.applied.get(key) == found:
            return True
        if ownership.already_applied(desired, live, me):
            self.applied[key] = found
            return True
        return False

    async def _prepare(self, planned: _Planned, me: ownership.Revision) -> None:
        """Before an adopted object is applied, in one write guarded by the resourceVersion the
        decision was made on: drop (older sibling) or demote (foreign controller) its current
        controller reference, and take off the mark a `Retain` removal left on a kept CRD (adopted,
        it is this revision's, and only its next removal may keep it again)."""
        live, verdict = planned.live, planned.verdict
        if live is None:
            return
        changes: dict[str, Any] = {}
        if verdict.release is not None:
            changes["ownerReferences"] = ownership.references_without(
                ownerrefs.owner_references(live), str(verdict.release.get("uid")), demote=not verdict.remove
            )
        if ownership.retained_for(live, me):
            changes["annotations"] = {names.RETAINED_PACKAGE_ANNOTATION: None}
        if changes:
            name, namespace = _name(live)
            patch = ownership.guarded_patch(live, changes)
            await self.client.patch(planned.gvk, name, patch, namespace=namespace, patch_type=PatchType.MERGE)
