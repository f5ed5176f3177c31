"""Every replica serves: followers unpack what the leader resolved.

Only the elected replica resolves tags and writes status (`controller`). Each other replica runs
this controller (`needs_leader_election = False`) over the same shared informer: for every
ClusterCatalog it serves exactly the digest named by `status.resolvedSource.image.ref`, pulling it
by digest into its own storage, and drops content of catalogs that are deleted, `Unavailable`, or
have no resolved source. A replica that becomes leader already holds the content.

The leader reports a catalog served once it holds it; a follower fetches it a moment later. A
client load-balanced to a follower in between would get a 404 for a catalog whose status says
`Serving`, so the content server asks `catch_up` on a miss: the follower fetches the catalog while
the request waits (joining the reconcile already doing it) and then answers it.

While this replica leads, the leader's reconciler owns storage and the follower does nothing; the
two never write the same catalog at once because `Content` serialises work per catalog anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from olm import oci
from olm.api.kinds import CLUSTER_CATALOG
from olm.catalogd.content import Content, ContentError
from olm.catalogd.server import CatchUp, NotHeldHere
from olm.catalogd.storage import StoredCatalog
from olm.catalogd.unpack import resolved_image
from olm_runtime import controller, finalizers
from olm_runtime.cache import CacheReader
from olm_runtime.client import errors
from olm_runtime.logging import get_logger
from olm_runtime.manager import Manager

CONTROLLER_NAME = "clustercatalog-follower"
_log = get_logger("catalogd.follower")


class FollowerReconciler:
    """Serves `status.resolvedSource` of every ClusterCatalog on a replica that does not lead."""

    def __init__(self, *, reader: CacheReader, content: Content, is_leader: Callable[[], bool]) -> None:
        self.reader = reader
        self.content = content
        self.is_leader = is_leader

    async def reconcile(self, request: controller.Request) -> controller.Result:
        if self.is_leader():
            return controller.Result()
        try:
            catalog = await self.reader.get(CLUSTER_CATALOG, request.name)
        except errors.NotFound:
            await self.content.remove(request.name)
            return controller.Result()
        reference = served_reference(catalog)
        if reference is None:
            await self.content.remove(request.name)
            return controller.Result()
        try:
            ensured = await self.content.ensure(request.name, reference)
        except ContentError as error:
            if error.terminal:  # the leader served it, so this only happens if the registry changed
                raise controller.TerminalError("UnpackFailed", error.message) from error
            raise
        if ensured.unpacked:
            _log.info("catalog.followed", catalog=request.name, ref=str(reference))
        return controller.Result()


def served_reference(catalog: Mapping[str, Any]) -> oci.Reference | None:
    """The digest reference the leader serves for `catalog`, or None if nothing should be served."""
    if finalizers.is_being_deleted(catalog):
        return None
    if (catalog.get("spec") or {}).get("availabilityMode", "Available") == "Unavailable":
        return None
    return resolved_image(catalog)


def catch_up(reader: CacheReader, content: Content) -> CatchUp:
    """The content server's fallback on a miss: the version of the catalog the leader serves,
    fetched onto this replica now; None when nothing is to be served under that name."""

    async def fetch(name: str) -> StoredCatalog | None:
        try:
            catalog = await reader.get(CLUSTER_CATALOG, name)
        except errors.NotFound:
            return None
        reference = served_reference(catalog)
        if reference is None:
            return None
        try:
            return (await content.ensure(name, reference)).stored
        except ContentError as error:
            raise NotHeldHere(error.message) from error

    return fetch


async def setup_with_manager(manager: Manager, content: Content) -> controller.Controller:
    """Wire the follower (a runnable on every replica) into `manager`."""
    reconciler = FollowerReconciler(
        reader=manager.reader, content=content, is_leader=lambda: manager.is_leader
    )
    builder = (
        controller.Builder(manager)
        .for_(CLUSTER_CATALOG)
        .named(CONTROLLER_NAME)
        .with_options(controller.Options(needs_leader_election=False))
    )
    return await builder.complete(reconciler)
