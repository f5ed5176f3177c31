"""Drift detection: informers on the objects revisions manage, run as the revisions' identities.

A revision's objects are read with the identity that writes them (the ServiceAccount it names),
never with the controller's own. For each object the rollout asks `lookup`, which decides once per
(identity, owner, kind, namespace) how far that identity may watch the kind (`access.watch_reach`):

- in all namespaces, or in the object's namespace: one informer per (identity, owner, kind, reach),
  shared by every revision of that owner written as that identity, selecting the owner's objects by
  the owner labels every managed object carries (the revision-name label for a revision without an
  owner). Its events enqueue the revision that controls the object, which restores it, and the
  rollout reads objects' current state from it. Where a revision has one object of a kind in a
  namespace (most kinds of most bundles), the informer names that object too
  (`fieldSelector=metadata.name=...`, in its namespace): the API server then answers the watch's
  initial list from its watch cache by key, where a watch that selects by label only is answered
  by a scan of every cached object of the kind, which made the API server's CPU for a restart of
  many extensions grow faster than their number;
- neither: no informer. The rollout reads each such object by GET, and the reconciler comes back
  every `Options.drift_poll_interval` seconds while the revision is active (`polled`), so their
  drift is repaired within that interval.

Shared drift watches (`Options.shared_drift_watches`, opt-in) trade that rule for memory at scale,
as upstream's single tracking cache does: a kind the controller itself may list and watch in all
namespaces gets one informer, as the controller, for the managed objects of every revision
(selected by the revision-name label), instead of one per identity and owner: 5 watches rather than
1,000 for 200 extensions. Kinds the controller may not watch cluster-wide fall back to the rule
above. The shared informer changes what the rollout reads first, not what it decides: an object
that is not the revision's own is read again by GET as the revision's identity before it is judged.

How far an identity may watch a kind is asked of the API server once per (identity, kind,
namespace), whichever owner asks, and first, once per identity, whether it may list and watch
everything (`access.may_watch_everything`): an installer ServiceAccount bound to `cluster-admin`
costs two access reviews in all, rather than two or four per kind and extension, which is most of
what a restart of many extensions sends before its watches open.

Uses are counted per revision: `release(revision)`, called once a revision has let go of its
objects (or is gone), stops every informer no remaining revision uses. A decision stands while a
revision uses it (the controller's own reach, once made, for the process's lifetime), and an
identity's answers while any revision written as it does: `list` and `watch` granted later take
effect after a restart of operator-controller (or, for a ServiceAccount, once no extension installed
with it remains and one is installed again).

Each informer starts from the API server's watch cache as it stands (`cached_first_list`), not
from a consistent read, which waits until that cache has caught up with etcd: up to about 100 ms
for each of the watches an install or a restart opens, in front of the phase that looks its kind
up. The rollout does not read an object's absence from an informer as its absence (it reads it
again by GET), and what the cache lagged behind arrives as events, each of which reconciles the
revision again.

`DriftWatches` is a `Runnable`: its informers run inside its `start()`, on the elected replica.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api import names, ownership
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller.clusterobjectset import access
from olm_runtime import cache, logging, ownerrefs
from olm_runtime.client import Client, GroupVersionKind, ResourceInfo, errors
from olm_runtime.controller import Request, event

__all__ = ["DriftWatches", "WatchUnavailable", "Watched", "owning_revisions", "selector_for"]

SHARED_IDENTITY = "operator-controller"
"""The identity of shared drift informers, in messages and informer listings."""
SHARED_SELECTOR = names.REVISION_NAME_LABEL
"""Every managed object carries the revision-name label (`ownership.desired_object`)."""
_log = logging.get_logger("operator_controller.clusterobjectset.watches")


def owning_revisions(obj: Mapping[str, Any]) -> Iterator[Request]:
    """The revision controlling `obj` (by controller reference), else the one its label names."""
    controller = ownerrefs.controller_of(obj)
    if controller is not None and ownerrefs.refers_to_kind(controller, CLUSTER_OBJECT_SET):
        yield Request(name=str(controller.get("name")))
        return
    label = ((obj.get("metadata") or {}).get("labels") or {}).get(names.REVISION_NAME_LABEL)
    if label:
        yield Request(name=label)


def selector_for(me: ownership.Revision) -> str:
    """The label selector of the objects `me` and the other revisions of its owner manage."""
    if me.owner is not None:
        return f"{names.OWNER_KIND_LABEL}={me.owner[0]},{names.OWNER_NAME_LABEL}={me.owner[1]}"
    return f"{names.REVISION_NAME_LABEL}={me.name}"


class WatchUnavailable(Exception):
    """The watch of a kind could not be decided or did not sync in time."""


@dataclass(frozen=True)
class Watched:
    """What `lookup` found for one object's kind."""

    resource: ResourceInfo
    informer: cache.Informer | None
    """None when the identity may not watch the kind there: read the object by GET."""


@dataclass(frozen=True)
class _Use:
    identity: str
    selector: str
    gvk: GroupVersionKind
    namespace: str
    """The object's namespace; "" for a cluster-scoped kind."""
    name: str
    """The object's name when it is the revision's only one of its kind there, else ""."""


@dataclass
class _Answers:
    """What the API server said one identity may watch."""

    everything: bool | None = None
    """Whether it may list and watch every kind in all namespaces; None until asked."""
    reach: dict[tuple[GroupVersionKind, str], access.Reach] = field(default_factory=dict)
    """(kind, object namespace) -> how far it may watch, asked when `everything` is False."""
    asking: asyncio.Lock = field(default_factory=asyncio.Lock)
    """Held while `everything` is asked: concurrent lookups share one answer."""


@dataclass(frozen=True)
class _Watch:
    identity: str
    selector: str
    gvk: GroupVersionKind
    namespace: str
    """The namespace watched; "" for all namespaces."""
    name: str = ""
    """The one object watched (with the selector); "" for every object the selector matches."""


class DriftWatches:
    """Starts drift informers on demand, as the revisions' identities, and feeds their events to
    `events` (a `Channel`)."""

    name = "drift-watches"

    def __init__(
        self,
        events: asyncio.Queue[event.GenericEvent],
        *,
        options: cache.CacheOptions | None = None,
        sync_timeout: float = 30.0,
        shared: Client | None = None,
    ) -> None:
        """`shared`: the controller's own client, to share drift watches (see the module)."""
        self._events = events
        self._shared = shared
        self._shared_reach: dict[GroupVersionKind, bool] = {}
        """Kind -> whether `shared` may list and watch it in all namespaces."""
        self._shared_deciding: dict[GroupVersionKind, asyncio.Lock] = {}
        self._options = options or cache.CacheOptions()
        self._reflector = dataclasses.replace(self._options.reflector, cached_first_list=True)
        self._sync_timeout = sync_timeout
        self._uses: dict[str, set[_Use]] = {}
        """Revision name -> what it looked up."""
        self._decided: dict[_Use, _Watch | None] = {}
        self._answers: dict[str, _Answers] = {}
        """Identity -> what the API server said it may watch, while a revision written as it is used."""
        self._deciding: dict[_Use, asyncio.Lock] = {}
        """One lock per use: a phase's objects are planned concurrently, and those of one kind and
        namespace must share one access review, not each send their own."""
        self._informers: dict[_Watch, cache.Informer] = {}
        self._running: dict[_Watch, asyncio.Task[None]] = {}
        self._prefetching: dict[str, set[asyncio.Task[None]]] = {}
        """Revision name -> its `prefetch` lookups still under way."""
        self._tasks: asyncio.TaskGroup | None = None

    async def start(self) -> None:
        """Run the informers, present and future, until cancelled."""
        try:
            async with asyncio.TaskGroup() as tasks:
                self._tasks = tasks
                for watch in self._informers:
                    self._launch(watch)
                await asyncio.get_running_loop().create_future()
        finally:
            self._tasks = None
            self._running.clear()

    def _launch(self, watch: _Watch) -> None:
        if self._tasks is not None and watch not in self._running:
            informer = self._informers[watch]
            # Named as the informer is, not by a new string: thousands of them run.
            self._running[watch] = self._tasks.create_task(informer.start(), name=informer.name)

    def _notify(self, obj: Any) -> None:
        if isinstance(obj, cache.DeletedFinalStateUnknown):
            obj = obj.obj
        self._events.put_nowait(event.GenericEvent(obj))

    async def lookup(
        self,
        revision: ownership.Revision,
        client: Client,
        identity: str,
        gvk: GroupVersionKind,
        namespace: str | None,
        *,
        name: str | None = None,
        wait: bool = True,
    ) -> Watched:
        """How `revision` (written as `client`, described as `identity`) reads objects of `gvk` in
        `namespace`: the synced informer, or none. `name`: the revision's only object of that kind
        there, which its watch then names (see the module). Raises `NoKindMatch` when the kind is
        not served, `WatchUnavailable` when the access review fails or the informer does not sync.

        `wait=False`: answer at once. An informer not yet decided on or not yet synced is started in
        the background and the answer is no informer (read the object by GET); the caller looks
        up again with `wait=True` before it relies on the watch (`Rollout` does, before it returns)."""
        resource = await client.resource_for(gvk)
        use = _Use(
            identity,
            selector_for(revision),
            gvk,
            (namespace or "") if resource.namespaced else "",
            name or "",
        )
        self._uses.setdefault(revision.name, set()).add(use)
        if not wait:
            decided = self._decided.get(use)
            informer = self._informers.get(decided) if decided is not None else None
            if informer is not None and informer.has_synced:
                return Watched(resource, informer)
            if use not in self._decided:
                self.prefetch(revision, client, identity, [(gvk, namespace, name)])
            return Watched(resource, None)
        async with self._deciding.setdefault(use, asyncio.Lock()):
            if use not in self._decided:
                self._decided[use] = await self._decide(use, resource, client)
        watch = self._decided[use]
        if watch is None:
            return Watched(resource, None)
        informer = self._informers[watch]
        try:
            await informer.wait_for_sync(timeout=self._sync_timeout)
        except TimeoutError:
            errors_seen = [r.last_error for r in informer.statistics().reflectors if r.last_error]
            detail = f": {errors_seen[0]}" if errors_seen else ""
            # Without this deadline a reconcile (and with it a graceful shutdown) would wait forever
            # on a watch that cannot start, e.g. when the ServiceAccount lost its rights meanwhile.
            raise WatchUnavailable(
                f"cannot watch {gvk.kind}.{gvk.group or 'core'} as {watch.identity}: "
                f"not synced after {self._sync_timeout:.0f}s{detail}"
            ) from None
        except cache.InformerStopped as e:
            raise WatchUnavailable(str(e)) from None
        return Watched(resource, informer)

    def prefetch(
        self,
        revision: ownership.Revision,
        client: Client,
        identity: str,
        objects: Iterable[tuple[GroupVersionKind, str | None, str | None]],
    ) -> None:
        """Start `lookup` of every (kind, namespace, name) given, in the background, so that a later
        phase finds its informers synced instead of reviewing access and waiting for a watch of
        each new kind in turn. A lookup that fails here is made again, and reported, by the phase
        that needs it."""
        if self._tasks is None:
            return
        pending = self._prefetching.setdefault(revision.name, set())
        for gvk, namespace, name in dict.fromkeys(objects):
            task = self._tasks.create_task(
                self._quiet_lookup(revision, client, identity, gvk, namespace, name=name)
            )
            pending.add(task)
            task.add_done_callback(pending.discard)

    async def _quiet_lookup(
        self,
        revision: ownership.Revision,
        client: Client,
        identity: str,
        gvk: GroupVersionKind,
        namespace: str | None,
        *,
        name: str | None,
    ) -> None:
        try:
            await self.lookup(revision, client, identity, gvk, namespace, name=name)
        except Exception as e:  # the phase looks it up again and reports it
            _log.debug("drift watch prefetch failed", kind=str(gvk), error=str(e))

    async def _decide(self, use: _Use, resource: ResourceInfo, client: Client) -> _Watch | None:
        if self._shared is not None and await self._shared_may_watch(resource):
            shared = _Watch(SHARED_IDENTITY, SHARED_SELECTOR, use.gvk, "")
            return self._informer_for(shared, resource, self._shared)
        try:
            reach = await self._identity_reach(use, resource, client)
        except errors.APIError as e:
            raise WatchUnavailable(
                f"cannot review access to {use.gvk.kind} as {use.identity}: {e.message}"
            ) from e
        if reach is access.Reach.NONE:
            return None
        # A watch that names its object must name its namespace too: only then does the API server
        # find the object by key.
        namespace = use.namespace if reach is access.Reach.NAMESPACE or use.name else ""
        watch = _Watch(use.identity, use.selector, use.gvk, namespace, use.name)
        return self._informer_for(watch, resource, client)

    async def _identity_reach(self, use: _Use, resource: ResourceInfo, client: Client) -> access.Reach:
        answers = self._answers.setdefault(use.identity, _Answers())
        async with answers.asking:
            if answers.everything is None:
                answers.everything = await access.may_watch_everything(client)
        if answers.everything:
            return access.Reach.ALL_NAMESPACES
        key = (use.gvk, use.namespace)
        if (known := answers.reach.get(key)) is None:
            known = answers.reach[key] = await access.watch_reach(client, resource, use.namespace or None)
        return known

    async def _shared_may_watch(self, resource: ResourceInfo) -> bool:
        assert self._shared is not None
        gvk = resource.gvk
        async with self._shared_deciding.setdefault(gvk, asyncio.Lock()):
            if gvk not in self._shared_reach:
                try:
                    reach = await access.watch_reach(self._shared, resource, None)
                except errors.APIError as e:
                    raise WatchUnavailable(
                        f"cannot review access to {gvk.kind} as {SHARED_IDENTITY}: {e.message}"
                    ) from e
                self._shared_reach[gvk] = reach is access.Reach.ALL_NAMESPACES
                if not self._shared_reach[gvk]:
                    # Once per kind: an administrator who meant to share this kind's watch learns
                    # which grant is missing.
                    _log.info(
                        "shared drift watch not possible: watching per ServiceAccount",
                        kind=str(gvk),
                        missing=f"list and watch on {resource.gvr.resource}.{resource.gvr.group or 'core'} "
                        "in all namespaces",
                    )
        return self._shared_reach[gvk]

    def _informer_for(self, watch: _Watch, resource: ResourceInfo, client: Client) -> _Watch:
        if watch not in self._informers:
            informer = cache.Informer(
                client.transport,  # the watching identity's own token: it sees what it may see
                resource,
                namespaces=(watch.namespace,) if watch.namespace else None,
                label_selector=watch.selector,
                field_selector=f"metadata.name={watch.name}" if watch.name else None,
                transform=self._options.transform,
                reflector_options=self._reflector,
                compact=True,
            )
            informer.add_event_handler(
                cache.EventHandlerFuncs(
                    on_add=lambda obj, _initial: self._notify(obj),
                    on_update=lambda _old, new: self._notify(new),
                    on_delete=self._notify,
                )
            )
            self._informers[watch] = informer
            self._launch(watch)
        return watch

    def polled(self, revision: str) -> list[GroupVersionKind]:
        """The kinds of `revision`'s objects read by GET instead of watched, sorted."""
        kinds = {use.gvk for use in self._uses.get(revision, ()) if self._decided.get(use, False) is None}
        return sorted(kinds, key=str)

    def release(self, revision: str) -> list[str]:
        """Forget what `revision` looked up; stop and return (by name) the informers no other
        revision uses."""
        for prefetching in self._prefetching.pop(revision, set()):
            prefetching.cancel()  # a lookup finishing later would register the revision's uses again
        mine = self._uses.pop(revision, set())
        others = set().union(*self._uses.values()) if self._uses else set()
        for use in mine - others:
            self._decided.pop(use, None)
            self._deciding.pop(use, None)
        for identity in {use.identity for use in mine} - {use.identity for use in others}:
            self._answers.pop(identity, None)
        wanted = {watch for watch in self._decided.values() if watch is not None}
        stopped: list[str] = []
        for watch in [w for w in self._informers if w not in wanted]:
            informer = self._informers.pop(watch)
            task = self._running.pop(watch, None)
            if task is not None:
                task.cancel()
            stopped.append(f"{informer.name} as {watch.identity}")
        return stopped

    def informers(self) -> list[cache.Informer]:
        """Every running drift informer."""
        return list(self._informers.values())
