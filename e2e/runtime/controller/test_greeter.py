"""The example controller (examples/greeter) works end to end on the real control plane."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest

from examples.greeter.controller import CRD, GREETING, setup_with_manager
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_runtime.manager import Manager
from olm_runtime.testing import settle
from olm_runtime.testing.poll import eventually


@pytest.fixture
async def greeting_crd(admin_client: Client) -> None:
    with contextlib.suppress(errors.AlreadyExists):
        await admin_client.create(CRD)
    await settle.crd_served(admin_client, CRD["metadata"]["name"])


async def test_greeting_gets_its_config_map_status_events_and_farewell(
    greeting_crd: None, admin_client: Client, manager: Manager, start: Callable[[], None], namespace: str
) -> None:
    await setup_with_manager(manager)
    start()
    greeting = {
        "apiVersion": GREETING.api_version,
        "kind": GREETING.kind,
        "metadata": {"name": "hello", "namespace": namespace},
        "spec": {"message": "hello, world"},
    }
    await admin_client.create(greeting)

    async def config_map_says(message: str) -> bool:
        try:
            cm = await admin_client.get(kinds.CONFIG_MAP, "hello-greeting", namespace=namespace)
        except errors.NotFound:
            return False
        data: dict[str, str] = cm.get("data", {})
        return data.get("message") == message

    async def ready() -> bool:
        current = await admin_client.get(GREETING, "hello", namespace=namespace)
        return conditions.is_true(current.get("status", {}).get("conditions", []), "Ready")

    await eventually(lambda: config_map_says("hello, world"), what="the greeting ConfigMap")
    await eventually(ready, what="Ready=True on the Greeting")
    stored = await admin_client.get(GREETING, "hello", namespace=namespace)
    assert stored["metadata"]["finalizers"] == ["greeter.example.com/farewell"]

    # The spec changes: the ConfigMap follows. The ConfigMap is tampered with or deleted: it comes back.
    await admin_client.patch(GREETING, "hello", {"spec": {"message": "bonjour"}}, namespace=namespace)
    await eventually(lambda: config_map_says("bonjour"), what="the ConfigMap to follow the spec")
    await admin_client.patch(
        kinds.CONFIG_MAP, "hello-greeting", {"data": {"message": "x"}}, namespace=namespace
    )
    await eventually(lambda: config_map_says("bonjour"), what="the tampered ConfigMap to be restored")
    await admin_client.delete(kinds.CONFIG_MAP, "hello-greeting", namespace=namespace)
    await eventually(lambda: config_map_says("bonjour"), what="the deleted ConfigMap to be recreated")

    # Deleting the Greeting runs the finalizer (a Farewell event) and then it is gone.
    await admin_client.delete(GREETING, "hello", namespace=namespace)

    async def gone() -> bool:
        try:
            await admin_client.get(GREETING, "hello", namespace=namespace)
        except errors.NotFound:
            return True
        return False

    await eventually(gone, what="the Greeting to be deleted after its finalizer")

    # Events are written by the recorder's broadcaster after the reconcile that records them, so
    # the Farewell may land a moment after the finalizer is gone.
    async def greeted_and_farewelled() -> bool:
        events = await admin_client.list(kinds.EVENT, namespace=namespace)
        reasons = {
            e.get("reason") for e in events.items if (e.get("involvedObject") or {}).get("name") == "hello"
        }
        return {"Greeted", "Farewell"} <= reasons

    await eventually(greeted_and_farewelled, what="the Greeted and Farewell events of the Greeting")
