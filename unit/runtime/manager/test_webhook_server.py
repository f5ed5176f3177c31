"""The webhook server on loopback with a throwaway CA: AdmissionReview in and out, failures, and
certificate rotation. The API server calling it is in e2e/runtime/manager/test_webhook.py."""

from __future__ import annotations

import asyncio
import base64
import shutil
import ssl
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from olm_runtime import metrics
from olm_runtime.manager import certwatcher, webhook
from olm_runtime.testing.pki import CertificateAuthority, KeyPair
from olm_runtime.testing.poll import eventually


def install(pair: KeyPair, cert_dir: Path) -> None:
    """Put a pair in place the way a Secret volume update does: new files, then a rename."""
    for source, name in ((pair.key_file, "tls.key"), (pair.cert_file, "tls.crt")):
        shutil.copy(source, cert_dir / f".{name}.tmp")
        (cert_dir / f".{name}.tmp").replace(cert_dir / name)


def review(obj: dict[str, Any] | None = None, *, uid: str = "") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid or str(uuid.uuid4()),
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": "CREATE",
            "namespace": "ns",
            "name": "cm",
            "object": obj if obj is not None else {"metadata": {"name": "cm"}},
            "userInfo": {"username": "admin"},
            "dryRun": False,
        },
    }


class Harness:
    def __init__(self, tmp_path: Path) -> None:
        self.ca = CertificateAuthority.load_or_create(tmp_path / "ca")
        self.cert_dir = tmp_path / "certs"
        self.cert_dir.mkdir()
        install(self.ca.issue("first", common_name="first", hosts=["127.0.0.1"]), self.cert_dir)
        self.server = webhook.WebhookServer(
            webhook.WebhookOptions(host="127.0.0.1", port=0, cert_dir=self.cert_dir, cert_poll_interval=0.05)
        )
        self.tls = ssl.create_default_context(cafile=str(self.ca.cert_file))

    @property
    def base(self) -> str:
        host, port = self.server.addresses[0]
        return f"https://{host}:{port}"

    async def post(
        self, path: str, body: bytes, content_type: str = "application/json"
    ) -> aiohttp.ClientResponse:
        async with aiohttp.ClientSession() as session:
            response = await session.post(
                self.base + path, data=body, headers={"Content-Type": content_type}, ssl=self.tls
            )
            await response.read()
            return response

    async def served_certificate(self) -> bytes:
        host, port = self.server.addresses[0]
        context = ssl.create_default_context(cafile=str(self.ca.cert_file))
        _, writer = await asyncio.open_connection(host, port, ssl=context)
        try:
            der: bytes = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        finally:
            writer.close()
        return der


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    h = Harness(tmp_path)
    task = asyncio.create_task(h.server.start())
    await asyncio.wait_for(h.server.wait_started(), 10)
    yield h
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_a_handler_answers_with_the_request_uid_and_its_patch(harness: Harness) -> None:
    seen: list[webhook.AdmissionRequest] = []

    async def label(request: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        seen.append(request)
        assert request.object is not None
        mutated = {**request.object, "metadata": {**request.object["metadata"], "labels": {"a": "b"}}}
        return webhook.patched(request.object, mutated, warnings=["labelled"])

    harness.server.register("/label", label)
    response = await harness.post("/label", orjson.dumps(review(uid="u-1")))
    assert response.status == 200
    body = orjson.loads(await response.read())
    assert body["apiVersion"] == "admission.k8s.io/v1"
    assert body["kind"] == "AdmissionReview"
    answer = body["response"]
    assert answer["uid"] == "u-1"
    assert answer["allowed"] is True
    assert answer["patchType"] == "JSONPatch"
    assert orjson.loads(base64.b64decode(answer["patch"])) == [
        {"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}
    ]
    assert answer["warnings"] == ["labelled"]
    (request,) = seen
    assert (request.operation, request.namespace, request.name) == ("CREATE", "ns", "cm")
    assert request.kind.kind == "ConfigMap"
    assert request.resource.resource == "configmaps"
    assert request.user_info["username"] == "admin"


async def test_a_denial_carries_its_message_and_code(harness: Harness) -> None:
    async def deny(_: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        return webhook.denied("spec.size must be at least 1", code=422, reason="Invalid")

    harness.server.register("/deny", deny)
    body = orjson.loads(await (await harness.post("/deny", orjson.dumps(review()))).read())
    assert body["response"]["allowed"] is False
    assert body["response"]["status"] == {
        "code": 422,
        "message": "spec.size must be at least 1",
        "reason": "Invalid",
    }


async def test_a_handler_that_raises_is_answered_as_an_internal_error(harness: Harness) -> None:
    async def broken(_: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        raise KeyError("spec")

    harness.server.register("/broken", broken)
    before = webhook._server.PANICS._value.get()
    response = await harness.post("/broken", orjson.dumps(review()))
    assert response.status == 200
    answer = orjson.loads(await response.read())["response"]
    assert answer["allowed"] is False
    assert answer["status"]["code"] == 500
    assert "/broken failed" in answer["status"]["message"]
    assert webhook._server.PANICS._value.get() == before + 1


@pytest.mark.parametrize(
    ("path", "body", "content_type", "status"),
    [
        pytest.param("/ok", b"{not json", "application/json", 400, id="not-json"),
        pytest.param("/ok", orjson.dumps({"kind": "AdmissionReview"}), "application/json", 400, id="not-v1"),
        pytest.param("/ok", orjson.dumps(review()), "text/plain", 415, id="wrong-content-type"),
        pytest.param("/nowhere", orjson.dumps(review()), "application/json", 404, id="unknown-path"),
    ],
)
async def test_bad_requests_get_http_errors(
    harness: Harness, path: str, body: bytes, content_type: str, status: int
) -> None:
    async def ok(_: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        return webhook.allowed()

    harness.server.register("/ok", ok)
    assert (await harness.post(path, body, content_type)).status == status


async def test_a_rotated_certificate_is_served_to_new_connections(harness: Harness) -> None:
    first = await harness.served_certificate()
    second = harness.ca.issue("second", common_name="second", hosts=["127.0.0.1"])
    install(second, harness.cert_dir)
    expected = ssl.PEM_cert_to_DER_cert(second.cert_file.read_text())
    assert expected != first

    async def rotated() -> bool:
        return await harness.served_certificate() == expected

    await eventually(rotated, what="the new certificate to be served", timeout=10, interval=0.05)


async def test_a_broken_pair_keeps_the_previous_certificate(harness: Harness) -> None:
    first = await harness.served_certificate()
    errors_before = certwatcher.READ_ERRORS._value.get()
    (harness.cert_dir / "tls.crt").write_text("not a certificate")

    async def failed_read() -> bool:
        return bool(certwatcher.READ_ERRORS._value.get() > errors_before)

    await eventually(failed_read, what="the broken pair to be read", timeout=10, interval=0.05)
    assert await harness.served_certificate() == first


async def test_start_fails_without_a_certificate(tmp_path: Path) -> None:
    server = webhook.WebhookServer(webhook.WebhookOptions(host="127.0.0.1", port=0, cert_dir=tmp_path))
    with pytest.raises(FileNotFoundError):
        await server.start()


def test_paths_are_registered_once_and_must_be_paths() -> None:
    server = webhook.WebhookServer()

    async def ok(_: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        return webhook.allowed()

    server.register("/validate-v1-widget", ok)
    with pytest.raises(ValueError, match="already registered"):
        server.register("/validate-v1-widget", ok)
    with pytest.raises(ValueError, match="must start with"):
        server.register("validate", ok)
    assert server.paths == ["/validate-v1-widget"]


def webhook_sample(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


async def test_requests_are_counted_by_path_and_code_timed_and_tracked_while_in_flight(
    harness: Harness,
) -> None:
    path = f"/count-{uuid.uuid4().hex[:6]}"
    entered = asyncio.Event()
    release = asyncio.Event()

    async def slow(_: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        entered.set()
        await release.wait()
        return webhook.allowed()

    harness.server.register(path, slow)
    pending = asyncio.create_task(harness.post(path, orjson.dumps(review())))
    await asyncio.wait_for(entered.wait(), 10)
    assert webhook_sample("controller_runtime_webhook_requests_in_flight", webhook=path) == 1
    release.set()
    assert (await pending).status == 200
    bad = await harness.post(path, b"{not json")
    assert bad.status == 400
    assert webhook_sample("controller_runtime_webhook_requests_in_flight", webhook=path) == 0
    assert webhook_sample("controller_runtime_webhook_requests_total", webhook=path, code="200") == 1
    assert webhook_sample("controller_runtime_webhook_requests_total", webhook=path, code="400") == 1
    assert webhook_sample("controller_runtime_webhook_latency_seconds_count", webhook=path) == 2


async def test_certificate_reads_are_counted(tmp_path: Path) -> None:
    before = webhook_sample("certwatcher_read_certificate_total")
    harness = Harness(tmp_path)
    task = asyncio.create_task(harness.server.start())
    try:
        await asyncio.wait_for(harness.server.wait_started(), 10)
        assert webhook_sample("certwatcher_read_certificate_total") >= before + 1
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_connections_negotiate_tls_1_2_or_newer(harness: Harness) -> None:
    host, port = harness.server.addresses[0]
    for maximum, expected in (
        (ssl.TLSVersion.TLSv1_2, "TLSv1.2"),
        (ssl.TLSVersion.MAXIMUM_SUPPORTED, "TLSv1.3"),
    ):
        context = ssl.create_default_context(cafile=str(harness.ca.cert_file))
        context.maximum_version = maximum
        _, writer = await asyncio.open_connection(host, port, ssl=context)
        try:
            assert writer.get_extra_info("ssl_object").version() == expected
        finally:
            writer.close()


async def test_the_answer_echoes_the_uid_of_every_request(harness: Harness) -> None:
    async def ok(_: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        return webhook.allowed()

    async def broken(_: webhook.AdmissionRequest) -> webhook.AdmissionResponse:
        raise RuntimeError("bug")

    harness.server.register("/ok", ok)
    harness.server.register("/broken", broken)
    uids = [str(uuid.uuid4()) for _ in range(3)]
    answers = await asyncio.gather(
        *(
            harness.post(p, orjson.dumps(review(uid=u)))
            for p, u in zip(["/ok", "/broken", "/ok"], uids, strict=True)
        )
    )
    bodies = [orjson.loads(await answer.read())["response"] for answer in answers]
    assert [b["uid"] for b in bodies] == uids
    assert [b["allowed"] for b in bodies] == [True, False, True]
