"""The ClusterExtension controller: installs, upgrades and removes extensions from catalogs.

Pipeline per reconcile (see `reconciler`): catalogs -> resolve -> unpack -> render -> preflight
-> apply -> status, each stage a package of `olm.operator_controller`. Content is rolled out as
ClusterObjectSet revisions `<extension>-<n>`, applied as the extension's ServiceAccount by the
ClusterObjectSet controller of the same process.

This package is only the controller: `reconciler` (the list of steps), `steps` (each step, a call
into one stage), `state` (what a reconcile learns), `status` (conditions and the status write),
`removal` (finalization), `options`.

    from olm.operator_controller import clusterextension
    await clusterextension.setup_with_manager(manager, catalog_client, registry, clusterextension.Options())
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from typing import Any

from olm import oci
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION, CLUSTER_OBJECT_SET, OPERATOR_CONDITION
from olm.operator_controller import revision_owners
from olm.operator_controller.clusterextension.catalogwatcher import CatalogWatcher
from olm.operator_controller.clusterextension.options import Installer, Options
from olm.operator_controller.clusterextension.reconciler import CONTROLLER_NAME, Reconciler
from olm.operator_controller.clusterextension.removal import FINALIZERS
from olm.pipeline.catalogs import CatalogClient
from olm.pipeline.unpack import BundleUnpacker
from olm_runtime import controller
from olm_runtime.client import kinds
from olm_runtime.controller import event, handler, source
from olm_runtime.manager import Manager

__all__ = ["CONTROLLER_NAME", "FINALIZERS", "Installer", "Options", "Reconciler", "setup_with_manager"]

CATALOG_WATCH_NAME = "clusterextension-catalogs"


def _condition_owner(obj: Mapping[str, Any]) -> Iterator[controller.Request]:
    """The extension whose revision applied an OperatorCondition: a changed signal may release, or
    hold, its update."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if labels.get(names.OWNER_KIND_LABEL) == names.CLUSTER_EXTENSION and labels.get(names.OWNER_NAME_LABEL):
        yield controller.Request(name=labels[names.OWNER_NAME_LABEL])


async def setup_with_manager(
    manager: Manager,
    catalog_client: CatalogClient,
    registry: oci.RegistryClient,
    options: Options | None = None,
) -> controller.Controller:
    """Register the ClusterExtension controller and its catalog watcher with `manager`.

    Equals `Builder(manager).for_(ClusterExtension).owns(ClusterObjectSet).watches(channel)`, where
    the channel is fed by a second controller reconciling ClusterCatalogs (`CatalogWatcher`), which
    enqueues only the extensions whose package a changed catalog holds; and OperatorConditions
    (`spec.upgrade.readiness`) enqueue the extension that applied them.
    """
    options = options or Options()
    # The ServiceAccount check reads this informer. Made here, it starts with the cache (in the
    # manager's context), not inside the first reconcile, whose trace it would otherwise join.
    await manager.cache.get_informer(kinds.SERVICE_ACCOUNT, metadata_only=True)
    await revision_owners.add_index(manager.cache)
    changed: asyncio.Queue[event.GenericEvent] = asyncio.Queue()
    watcher = CatalogWatcher(manager.reader, catalog_client, changed)
    await controller.Builder(manager).for_(CLUSTER_CATALOG).named(CATALOG_WATCH_NAME).complete(watcher)
    reconciler = Reconciler(
        manager.client,
        manager.reader,
        catalog_client=catalog_client,
        unpacker=BundleUnpacker(registry, options.cache_dir / "unpack"),
        recorder=manager.event_recorder("operator-controller"),
        options=options,
    )
    builder = (
        controller.Builder(manager)
        .for_(CLUSTER_EXTENSION)
        .owns(CLUSTER_OBJECT_SET)
        .watches(source.Channel(changed))
        .watches_kind(OPERATOR_CONDITION, handler.enqueue_mapped(_condition_owner))
        .named(CONTROLLER_NAME)
        .with_options(controller.Options(max_concurrent_reconciles=options.max_concurrent_reconciles))
    )
    return await builder.complete(reconciler)
