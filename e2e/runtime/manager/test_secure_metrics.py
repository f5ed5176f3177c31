"""Secure metrics against the real API server: HTTPS, TokenReview, SubjectAccessReview, and the
memory of their answers."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import aiohttp
import pytest
from cryptography import x509

from olm_runtime import metrics
from olm_runtime.client import Client, errors, kinds
from olm_runtime.manager import Manager, ManagerOptions, SecureMetricsOptions
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.process import free_ports
from olm_testkit import metricsreader


@dataclass
class Tokens:
    reader: str
    """A ServiceAccount bound to a ClusterRole allowing `get` on `/metrics`."""
    stranger: str
    """A ServiceAccount with no permission on `/metrics`."""


@pytest.fixture
async def tokens(client: Client, namespace: str) -> AsyncIterator[Tokens]:
    role = f"e2e-metrics-reader-{uuid.uuid4().hex[:8]}"
    await client.apply(metricsreader.cluster_role(role), field_manager="e2e")
    reader = await metricsreader.reader_token(client, namespace=namespace, name="reader", role=role)
    stranger = await metricsreader.service_account_token(client, namespace, "stranger")
    yield Tokens(reader=reader, stranger=stranger)
    for kind, name in (
        (kinds.CLUSTER_ROLE_BINDING, f"{role}-{namespace}-reader"),
        (kinds.CLUSTER_ROLE, role),
    ):
        with contextlib.suppress(errors.NotFound):
            await client.delete(kind, name)


def reviews() -> tuple[float, float]:
    """TokenReviews and SubjectAccessReviews this process made so far."""

    def total(name: str) -> float:
        return sum(
            sample.value
            for family in metrics.REGISTRY.collect()
            for sample in family.samples
            if sample.name == name
        )

    return total("apiserver_delegated_authn_request_total"), total("apiserver_delegated_authz_request_total")


async def get(url: str, *, token: str | None = None, tls: ssl.SSLContext | bool = False) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers, ssl=tls) as response:
        return response.status, await response.text()


async def start_secure_manager(
    client: Client, running: Callable[[Manager], asyncio.Task[None]], secure: SecureMetricsOptions
) -> str:
    """A manager serving secure metrics on a free loopback port; its base URL once it listens."""
    port, probes = free_ports(2)
    options = ManagerOptions(
        metrics_bind_address=f"127.0.0.1:{port}",
        health_probe_bind_address=f"127.0.0.1:{probes}",
        metrics_secure=secure,
    )
    running(Manager(client, options=options))
    base = f"https://127.0.0.1:{port}"

    async def listening() -> bool:
        try:
            await get(f"{base}/metrics")
        except aiohttp.ClientConnectionError:
            return False
        return True

    await eventually(listening, what="the secure metrics server to listen", timeout=30, interval=0.1)
    return base


async def test_only_a_caller_the_api_server_authorizes_reads_metrics_and_answers_are_remembered(
    client: Client, namespace: str, tokens: Tokens, running: Callable[[Manager], asyncio.Task[None]]
) -> None:
    base = await start_secure_manager(client, running, SecureMetricsOptions())
    port = int(base.rsplit(":", 1)[1])

    # No certificate files: a self-signed one, valid for loopback too.
    served = x509.load_pem_x509_certificate(
        (await asyncio.to_thread(ssl.get_server_certificate, ("127.0.0.1", port))).encode()
    )
    assert served.issuer == served.subject
    names = served.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in names.get_values_for_type(x509.DNSName)
    with pytest.raises(aiohttp.ClientConnectorCertificateError):
        await get(f"{base}/metrics", tls=ssl.create_default_context())
    with pytest.raises(aiohttp.ClientError):
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/metrics"):
            pass

    assert await get(f"{base}/metrics") == (401, "Unauthorized\n")
    assert (await get(f"{base}/metrics", token="not-a-token"))[0] == 401
    denied = f"Authorization denied for user system:serviceaccount:{namespace}:stranger\n"
    assert await get(f"{base}/metrics", token=tokens.stranger) == (403, denied)

    authn, authz = reviews()
    status, text = await get(f"{base}/metrics", token=tokens.reader)
    assert status == 200
    assert "process_resident_memory_bytes" in text
    assert "apiserver_delegated_authz_request_total" in text
    for _ in range(5):
        assert (await get(f"{base}/metrics", token=tokens.reader))[0] == 200
    assert reviews() == (authn + 1, authz + 1), "six scrapes cost one review of each kind"

    # The SubjectAccessReview is about the path asked for: the reader may get /metrics only, so another
    # path is denied before it could be found missing, while /healthz, public to every authenticated
    # user in Kubernetes' default RBAC (system:public-info-viewer), passes and is not served here.
    assert (await get(f"{base}/debug/pprof", token=tokens.reader))[0] == 403
    assert (await get(f"{base}/healthz", token=tokens.reader))[0] == 404
    assert reviews() == (authn + 1, authz + 3), "the token is remembered; each new path is reviewed"


async def test_certificate_files_are_served_and_verifiable(
    client: Client,
    tokens: Tokens,
    control_plane: ControlPlane,
    running: Callable[[Manager], asyncio.Task[None]],
) -> None:
    pair = control_plane.certificate_authority().issue(
        f"metrics-{uuid.uuid4().hex[:8]}", common_name="metrics", hosts=["127.0.0.1"]
    )
    secure = SecureMetricsOptions(
        cert_dir=pair.cert_file.parent, cert_name=pair.cert_file.name, key_name=pair.key_file.name
    )
    base = await start_secure_manager(client, running, secure)
    trust = ssl.create_default_context(cafile=str(control_plane.ca_file))
    status, text = await get(f"{base}/metrics", token=tokens.reader, tls=trust)
    assert status == 200
    assert "certwatcher_read_certificate_total" in text
