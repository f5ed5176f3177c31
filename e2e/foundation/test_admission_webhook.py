"""The API server calls a mutating admission webhook served by the test over TLS on loopback."""

from __future__ import annotations

import base64
import json
import ssl
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from kubernetes_asyncio import client

from olm_runtime.client import Client
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.process import free_ports


async def _mutate(request: web.Request) -> web.Response:
    review = await request.json()
    patch = [{"op": "add", "path": "/metadata/labels", "value": {"mutated-by": "test-webhook"}}]
    response = {
        "uid": review["request"]["uid"],
        "allowed": True,
        "patchType": "JSONPatch",
        "patch": base64.b64encode(json.dumps(patch).encode()).decode(),
    }
    return web.json_response(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
    )


@pytest.fixture
async def webhook_url(control_plane: ControlPlane) -> AsyncIterator[str]:
    pair = control_plane.certificate_authority().issue("webhook", common_name="webhook", hosts=["127.0.0.1"])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(pair.cert_file, pair.key_file)
    app = web.Application()
    app.router.add_post("/mutate", _mutate)
    runner = web.AppRunner(app)
    await runner.setup()
    (port,) = free_ports(1)
    site = web.TCPSite(runner, "127.0.0.1", port, ssl_context=context)
    await site.start()
    try:
        yield f"https://127.0.0.1:{port}/mutate"
    finally:
        await runner.cleanup()


async def test_mutating_webhook_patch_is_visible_on_the_stored_object(
    api_client: client.ApiClient,
    admin_client: Client,
    control_plane: ControlPlane,
    webhook_url: str,
    namespace: str,
) -> None:
    admission = client.AdmissionregistrationV1Api(api_client)
    core = client.CoreV1Api(api_client)
    name = f"label-{namespace}"
    # Bodies are plain dicts, which the client serializes as-is; its stubs accept only the model classes.
    await admission.create_mutating_webhook_configuration(
        {  # type: ignore[arg-type]
            "metadata": {"name": name},
            "webhooks": [
                {
                    "name": "label.test.olm-py.io",
                    "clientConfig": {
                        "url": webhook_url,
                        "caBundle": base64.b64encode(control_plane.ca_file.read_bytes()).decode(),
                    },
                    "rules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["configmaps"],
                        }
                    ],
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "failurePolicy": "Fail",
                    "timeoutSeconds": 10,
                }
            ],
        }
    )
    try:
        # The API server loads the configuration a moment after it is created; until then a create
        # skips the webhook (failurePolicy only covers a webhook that is called).
        await settle.mutating(
            admin_client,
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe", "namespace": namespace}},
            applied=lambda cm: cm["metadata"].get("labels") == {"mutated-by": "test-webhook"},
            what=f"the API server to call MutatingWebhookConfiguration {name}",
        )
        # failurePolicy Fail: now that the webhook is loaded, a create that succeeds went through it;
        # the label proves it patched.
        created = await core.create_namespaced_config_map(namespace, {"metadata": {"name": "patched"}})  # type: ignore[arg-type]
        stored = await core.read_namespaced_config_map("patched", namespace)
        assert created.metadata.labels == {"mutated-by": "test-webhook"}
        assert stored.metadata.labels == {"mutated-by": "test-webhook"}
    finally:
        await admission.delete_mutating_webhook_configuration(name)
