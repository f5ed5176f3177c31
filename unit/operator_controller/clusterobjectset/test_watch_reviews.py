"""Access reviews of drift watches: objects of one kind and namespace, planned concurrently, share
one; an identity's answers serve every owner written as it; one that may watch everything is asked
only that."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, cast

from olm.api.ownership import Revision
from olm.operator_controller.clusterobjectset.watches import DriftWatches, WatchUnavailable
from olm_runtime.client import Client, GroupVersionKind, ResourceInfo, kinds
from olm_runtime.client.gvk import GroupVersionResource
from olm_runtime.testing.poll import eventually

CONFIG_MAPS = ResourceInfo(kinds.CONFIG_MAP, GroupVersionResource("", "v1", "configmaps"), namespaced=True)


class _Reviewer:
    """Answers every SelfSubjectAccessReview with "not allowed", after a pause that lets
    concurrent lookups overlap."""

    def __init__(self) -> None:
        self.reviews = 0

    async def resource_for(self, gvk: GroupVersionKind) -> ResourceInfo:
        return CONFIG_MAPS

    async def create(self, review: dict[str, Any]) -> dict[str, Any]:
        self.reviews += 1
        await asyncio.sleep(0.001)
        return {"status": {"allowed": False}}


async def test_concurrent_lookups_of_one_kind_and_namespace_review_access_once() -> None:
    watches = DriftWatches(asyncio.Queue())
    reviewer = _Reviewer()
    me = Revision("app-1", "uid-1", 1, {})
    client = cast(Client, reviewer)

    found = await asyncio.gather(
        *(watches.lookup(me, client, "sa", kinds.CONFIG_MAP, "ns") for _ in range(20))
    )

    assert all(w.informer is None for w in found)
    # list and watch: of everything, of the kind in all namespaces, of the kind in "ns"
    assert reviewer.reviews == 6
    assert watches.polled("app-1") == [kinds.CONFIG_MAP]


async def test_a_kind_the_controller_may_not_watch_everywhere_falls_back_to_each_identity() -> None:
    controller = _Reviewer()
    watches = DriftWatches(asyncio.Queue(), shared=cast(Client, controller))
    accounts = {"sa-1": _Reviewer(), "sa-2": _Reviewer()}
    me = Revision("app-1", "uid-1", 1, {})

    found = await asyncio.gather(
        *(
            watches.lookup(me, cast(Client, reviewer), identity, kinds.CONFIG_MAP, "ns")
            for identity, reviewer in accounts.items()
            for _ in range(10)
        )
    )

    assert all(w.informer is None for w in found)
    assert controller.reviews == 2  # list and watch in all namespaces, once for the kind
    assert [reviewer.reviews for reviewer in accounts.values()] == [6, 6]


async def test_an_identitys_answers_serve_every_owner_until_none_is_left() -> None:
    watches = DriftWatches(asyncio.Queue())
    reviewer = _Reviewer()
    client = cast(Client, reviewer)
    owners = [Revision(f"app{i}-1", f"uid-{i}", 1, {}) for i in range(3)]

    for me in owners:
        await watches.lookup(me, client, "sa", kinds.CONFIG_MAP, "ns")
    assert reviewer.reviews == 6  # for the first owner only
    assert [watches.polled(me.name) for me in owners] == [[kinds.CONFIG_MAP]] * 3

    watches.release(owners[0].name)
    await watches.lookup(owners[0], client, "sa", kinds.CONFIG_MAP, "ns")
    assert reviewer.reviews == 6  # the others still use the identity's answers

    for me in owners:
        watches.release(me.name)
    await watches.lookup(owners[0], client, "sa", kinds.CONFIG_MAP, "ns")
    assert reviewer.reviews == 12  # none was left: asked again, so later grants take effect


class _Admin(_Reviewer):
    """May list and watch everything (`*` resources of `*` groups)."""

    transport = None  # the informers are never started here

    async def create(self, review: dict[str, Any]) -> dict[str, Any]:
        self.reviews += 1
        return {"status": {"allowed": review["spec"]["resourceAttributes"].get("resource") == "*"}}


async def test_an_identity_that_may_watch_everything_is_asked_once_for_every_kind() -> None:
    watches = DriftWatches(asyncio.Queue(), sync_timeout=0.01)
    admin = _Admin()
    owners = [Revision(f"app{i}-1", f"uid-{i}", 1, {}) for i in range(3)]

    async def watched(me: Revision, namespace: str) -> str:
        try:
            await watches.lookup(me, cast(Client, admin), "sa", kinds.CONFIG_MAP, namespace)
        except WatchUnavailable as e:  # decided to watch; nothing runs the informers in this test
            return str(e)
        return "synced"

    found = await asyncio.gather(*(watched(me, ns) for me in owners for ns in ("a", "b")))

    assert admin.reviews == 2  # list and watch of everything
    assert all("not synced" in outcome for outcome in found)
    assert watches.polled(owners[0].name) == []


async def test_a_lookup_that_does_not_wait_answers_at_once_and_decides_in_the_background() -> None:
    watches = DriftWatches(asyncio.Queue())
    running = asyncio.create_task(watches.start())
    reviewer = _Reviewer()
    client = cast(Client, reviewer)
    me = Revision("app-1", "uid-1", 1, {})
    try:
        await asyncio.sleep(0)  # one turn of the loop: start() opens the task group lookups use

        found = await watches.lookup(me, client, "sa", kinds.CONFIG_MAP, "ns", wait=False)
        assert found.informer is None
        assert reviewer.reviews == 0  # it answered before asking anything
        assert watches.polled("app-1") == []  # not decided yet

        async def decided() -> bool:
            return watches.polled("app-1") == [kinds.CONFIG_MAP]

        await eventually(decided, what="the decision made in the background", timeout=5, interval=0.01)
        assert reviewer.reviews == 6
        # A lookup that waits finds it decided: nothing is asked again.
        await watches.lookup(me, client, "sa", kinds.CONFIG_MAP, "ns")
        assert reviewer.reviews == 6
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
