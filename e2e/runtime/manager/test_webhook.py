"""The real API server calls the manager's webhook server: a mutation it asked for is stored, and a
rotated serving certificate is picked up without a restart."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import shutil
import ssl
import uuid
from collections.abc import Callable
from pathlib import Path

from olm_runtime.client import Client, errors, kinds
from olm_runtime.manager import Manager, ManagerOptions, WebhookOptions, webhook
from olm_runtime.testing import settle
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.pki import KeyPair
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports

from .conftest import wait_ready


def install(pair: KeyPair, cert_dir: Path) -> None:
    """Replace the serving pair the way a Secret volume update does: new files, then a rename."""
    for source, name in ((pair.key_file, "tls.key"), (pair.cert_file, "tls.crt")):
        shutil.copy(source, cert_dir / f".{name}.tmp")
        (cert_dir / f".{name}.tmp").replace(cert_dir / name)


async def served_certificate(port: int, ca_file: Path) -> bytes:
    context = ssl.create_default_context(cafile=str(ca_file))
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    try:
        der: bytes = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
    return der


async def add_tier(request: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
    if request.object is None:
        return webhook.allowed()
    mutated = copy.deepcopy(request.object)
    mutated.setdefault("metadata", {}).setdefault("labels", {})["tier"] = "gold"
    mutated.setdefault("data", {})["mutated-by"] = request.user_info.get("username", "")
    return webhook.patched(request.object, mutated)


async def test_the_api_server_applies_the_webhooks_patch_and_a_rotated_cert_is_served(
    client: Client,
    control_plane: ControlPlane,
    namespace: str,
    tmp_path: Path,
    running: Callable[[Manager], asyncio.Task[None]],
) -> None:
    ca = control_plane.certificate_authority()
    suffix = uuid.uuid4().hex[:8]
    cert_dir = tmp_path / "serving-certs"
    cert_dir.mkdir()
    install(ca.issue(f"webhook-{suffix}-1", common_name="webhook-1", hosts=["127.0.0.1"]), cert_dir)
    webhook_port, probe_port = free_ports(2)
    manager = Manager(
        client,
        options=ManagerOptions(
            metrics_bind_address="0",
            health_probe_bind_address=f"127.0.0.1:{probe_port}",
            webhook=WebhookOptions(
                host="127.0.0.1", port=webhook_port, cert_dir=cert_dir, cert_poll_interval=0.2
            ),
        ),
    )
    manager.webhook_server.register("/add-tier", add_tier)
    running(manager)
    await wait_ready(f"http://127.0.0.1:{probe_port}")  # includes the "webhook" ready check

    name = f"tier-{suffix}"
    await client.create(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [
                {
                    "name": "tier.e2e.olm-py.io",
                    "clientConfig": {
                        "url": f"https://127.0.0.1:{webhook_port}/add-tier",
                        "caBundle": base64.b64encode(ca.cert_pem).decode(),
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
        probe = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "probe", "namespace": namespace},
        }
        await settle.mutating(
            client,
            probe,
            applied=lambda cm: "tier" in cm["metadata"].get("labels", {}),
            what=f"the API server to call MutatingWebhookConfiguration {name}",
        )

        async def create_and_check(cm: str) -> None:
            # failurePolicy Fail: now that the webhook is loaded, a create that succeeds went through it.
            await client.create(
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": cm, "namespace": namespace}}
            )
            stored = await client.get(kinds.CONFIG_MAP, cm, namespace=namespace)
            assert stored["metadata"]["labels"] == {"tier": "gold"}
            assert stored["data"]["mutated-by"]  # the user the API server said made the request

        await create_and_check("first")

        first = await served_certificate(webhook_port, ca.cert_file)
        rotated = ca.issue(f"webhook-{suffix}-2", common_name="webhook-2", hosts=["127.0.0.1"])
        install(rotated, cert_dir)
        expected = ssl.PEM_cert_to_DER_cert(rotated.cert_file.read_text())
        assert expected != first

        async def new_cert_served() -> bool:
            return await served_certificate(webhook_port, ca.cert_file) == expected

        await eventually(
            new_cert_served, what="the rotated certificate to be served", timeout=15, interval=0.1
        )
        await create_and_check("second")  # the API server's new connections accept the new pair
    finally:
        with contextlib.suppress(errors.NotFound):
            await client.delete(kinds.MUTATING_WEBHOOK_CONFIGURATION, name)
