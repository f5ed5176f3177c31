"""The Greeting reconciler and the wiring of its controller."""

from __future__ import annotations

import contextlib
from typing import Any

from olm_runtime import conditions, controller, events, finalizers, ownerrefs
from olm_runtime.cache import CacheReader
from olm_runtime.client import Client, GroupVersionKind, errors, kinds
from olm_runtime.manager import Manager

GREETING = GroupVersionKind("greeter.example.com", "v1", "Greeting")
FINALIZER = "greeter.example.com/farewell"
FIELD_MANAGER = "greeter"

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "greetings.greeter.example.com"},
    "spec": {
        "group": "greeter.example.com",
        "scope": "Namespaced",
        "names": {"plural": "greetings", "singular": "greeting", "kind": "Greeting"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["message"],
                                "properties": {"message": {"type": "string", "maxLength": 1024}},
                            },
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


class GreetingReconciler:
    def __init__(self, reader: CacheReader, client: Client, recorder: events.EventRecorder) -> None:
        self.reader = reader
        self.client = client
        self.recorder = recorder

    async def reconcile(self, request: controller.Request) -> controller.Result:
        try:
            greeting = await self.reader.get(GREETING, request.name, namespace=request.namespace)
        except errors.NotFound:
            return controller.Result()  # gone; its ConfigMap goes with it (ownerReference)
        if finalizers.is_being_deleted(greeting):
            self.recorder.event(greeting, "Normal", "Farewell", f"goodbye from {request.name}")
            await finalizers.remove_finalizer(self.client, GREETING, greeting, FINALIZER)
            return controller.Result()
        greeting = await finalizers.ensure_finalizer(self.client, GREETING, greeting, FINALIZER)
        await self.client.apply(self._config_map(greeting), field_manager=FIELD_MANAGER, force=True)
        await self._report_ready(greeting)
        return controller.Result()

    def _config_map(self, greeting: Any) -> dict[str, Any]:
        metadata = greeting["metadata"]
        config_map: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{metadata['name']}-greeting", "namespace": metadata["namespace"]},
            "data": {"message": greeting["spec"]["message"]},
        }
        ownerrefs.set_controller_reference(greeting, config_map)
        return config_map

    async def _report_ready(self, greeting: Any) -> None:
        status = dict(greeting.get("status") or {})
        items = [dict(c) for c in status.get("conditions") or []]
        changed = conditions.set_condition(
            items,
            "Ready",
            "True",
            reason="Greeted",
            message="the greeting ConfigMap holds the message",
            observed_generation=greeting["metadata"].get("generation"),
        )
        if not changed:
            return
        self.recorder.event(greeting, "Normal", "Greeted", "the greeting ConfigMap holds the message")
        with contextlib.suppress(errors.NotFound):  # deleted meanwhile: the next event ends it
            await self.client.patch_status(
                GREETING,
                greeting["metadata"]["name"],
                {"status": {"conditions": items}},
                namespace=greeting["metadata"]["namespace"],
            )


async def setup_with_manager(manager: Manager) -> controller.Controller:
    """Wire the Greeting controller into `manager` (the CRD must exist)."""
    reconciler = GreetingReconciler(manager.reader, manager.client, manager.event_recorder("greeter"))
    builder = controller.Builder(manager).for_(GREETING).owns(kinds.CONFIG_MAP).named("greeter")
    return await builder.complete(reconciler)
