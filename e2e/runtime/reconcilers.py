"""Controllers the runtime's e2e tests register when the controller itself is not what they test."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from olm_runtime import controller
from olm_runtime.client import kinds
from olm_runtime.manager import Manager

Reconcile = Callable[[controller.Request], Awaitable[controller.Result]]


def recording_names(names: list[str]) -> Reconcile:
    """A reconcile function that writes down the name of every request and succeeds."""

    async def reconcile(request: controller.Request) -> controller.Result:
        names.append(request.name)
        return controller.Result()

    return reconcile


async def add_config_map_controller(manager: Manager, name: str, reconcile: Reconcile) -> None:
    """Add a controller `name` to `manager` that reconciles ConfigMaps with `reconcile`."""
    await (
        controller.Builder(manager)
        .for_(kinds.CONFIG_MAP)
        .named(name)
        .complete(controller.ReconcilerFunc(reconcile))
    )
