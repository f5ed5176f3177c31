"""The ClusterObjectSet controller: phased, probed, collision-safe rollout of revisions.

A ClusterObjectSet (COS) is one immutable revision of a set of objects in ordered phases. While it
is `Active` the controller applies its phases in order with server-side apply, as the
ServiceAccount its annotations name, and starts a phase only when every object of the previous one
passes its readiness probes. It never takes over an object its collision protection forbids, hands
objects over from older to newer revisions of the same owner, archives older revisions once a newer
one succeeded, and restores managed objects that drift. An `Archived` (or deleted) revision deletes
the objects no newer revision took over and lets go of the others.

Modules, in pipeline order: `sources` (inline and Secret-referenced objects, digests), `identity`,
`olm.api.ownership` (collisions and hand-over, shared with olmctl's preview), `rollout` (apply +
probe per phase), `probes`, `teardown`, `status` (conditions), `access` and `watches` (drift
informers, as the revision's identity), `reconciler` (the steps), `options`.

    from olm.operator_controller import clusterobjectset
    await clusterobjectset.setup_with_manager(manager, clusterobjectset.Options())
"""

from __future__ import annotations

import asyncio

from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller import revision_owners
from olm.operator_controller.clusterobjectset.identity import IDENTITY_POLICY
from olm.operator_controller.clusterobjectset.options import Options
from olm.operator_controller.clusterobjectset.reconciler import CONTROLLER_NAME, Reconciler
from olm.operator_controller.clusterobjectset.watches import DriftWatches, owning_revisions
from olm_runtime import controller
from olm_runtime.controller import event, handler, source
from olm_runtime.manager import Manager

__all__ = ["CONTROLLER_NAME", "IDENTITY_POLICY", "Options", "Reconciler", "setup_with_manager"]


async def setup_with_manager(manager: Manager, options: Options | None = None) -> controller.Controller:
    """Register the ClusterObjectSet controller with `manager` (the CRDs must be installed).

    Equals `Builder(manager).for_(COS).watches(source.Channel(drift events)).complete(Reconciler)`,
    plus the `DriftWatches` runnable: the COS informer drives reconciles, and the drift informers
    (created per identity, owner and managed kind as revisions need them, outside the manager's
    cache because each runs with a ServiceAccount's token, or per kind as the controller with
    `Options.shared_drift_watches`) feed a channel that maps objects to their
    controlling revision.
    """
    options = options or Options()
    await revision_owners.add_index(manager.cache)
    drift: asyncio.Queue[event.GenericEvent] = asyncio.Queue()
    watches = DriftWatches(
        drift,
        options=manager.cache.options,
        shared=manager.client if options.shared_drift_watches else None,
    )
    manager.add(watches)
    reconciler = Reconciler(
        manager.client,
        manager.reader,
        watches,
        manager.event_recorder("clusterobjectset-controller"),
        options,
    )
    builder = (
        controller.Builder(manager)
        .for_(CLUSTER_OBJECT_SET)
        .watches(source.Channel(drift, handler=handler.enqueue_mapped(owning_revisions)))
        .named(CONTROLLER_NAME)
        .with_options(controller.Options(max_concurrent_reconciles=options.max_concurrent_reconciles))
    )
    return await builder.complete(reconciler)
