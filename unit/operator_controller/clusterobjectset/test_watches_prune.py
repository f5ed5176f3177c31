"""Drift informers stop once no revision manages their kind, and come back on demand."""

from __future__ import annotations

import asyncio
from typing import Any

from olm.operator_controller.clusterobjectset.watches import DriftWatches
from olm_runtime.client import kinds


class FakeInformer:
    def __init__(self, objects: int) -> None:
        self.objects = objects
        self.has_synced = True

    def __len__(self) -> int:
        return self.objects

    def add_event_handler(self, handler: Any) -> None:
        self.handler = handler

    async def wait_for_sync(self) -> None:
        return None


class FakeCache:
    """Stands in for the runtime cache at its two-method seam: hand out and remove informers."""

    def __init__(self, sizes: dict[Any, int]) -> None:
        self.sizes = sizes
        self.removed: list[FakeInformer] = []

    async def get_informer(self, gvk: Any, **_: Any) -> FakeInformer:
        return FakeInformer(self.sizes[gvk])

    def remove_informer(self, informer: FakeInformer) -> bool:
        self.removed.append(informer)
        return True


async def test_prune_stops_only_empty_informers_and_a_later_use_starts_a_new_one() -> None:
    fake = FakeCache({kinds.CONFIG_MAP: 0, kinds.DEPLOYMENT: 2})
    watches = DriftWatches(fake, asyncio.Queue())  # type: ignore[arg-type]
    # The informers come from the fake cache; only their identity matters here.
    empty: object = await watches.informer(kinds.CONFIG_MAP)
    await watches.informer(kinds.DEPLOYMENT)

    assert await watches.prune() == [kinds.CONFIG_MAP]
    assert fake.removed == [empty]
    assert watches.kinds() == [kinds.DEPLOYMENT]
    assert await watches.informer(kinds.CONFIG_MAP) is not empty
    assert sorted(map(str, watches.kinds())) == sorted(map(str, [kinds.DEPLOYMENT, kinds.CONFIG_MAP]))
