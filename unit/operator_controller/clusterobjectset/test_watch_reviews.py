"""Objects of one kind and namespace, planned concurrently, share one access review."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from olm.api.ownership import Revision
from olm.operator_controller.clusterobjectset.watches import DriftWatches
from olm_runtime.client import Client, GroupVersionKind, ResourceInfo, kinds
from olm_runtime.client.gvk import GroupVersionResource

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
    assert reviewer.reviews == 4  # list and watch, in all namespaces and then in "ns"
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
    assert [reviewer.reviews for reviewer in accounts.values()] == [4, 4]
