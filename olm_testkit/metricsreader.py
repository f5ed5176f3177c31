"""A ServiceAccount token that may read OLM's secure `/metrics`, for the tests that run OLM as processes.

Both processes serve `/metrics` over HTTPS to callers the API server allows `get` on the
non-resource URL `/metrics` (see docs/observability/metrics.md). `reader_token` makes such a caller
as a scraper would be made in a cluster: a ServiceAccount bound to a ClusterRole with that one rule
(by default the `operator-controller-metrics-reader` ClusterRole of manifests/, created here with the
same rule when it is missing, as in process-mode runs that apply no manifests), then a TokenRequest,
returned once the API server allows the account `get /metrics`: a scrape made sooner could be refused,
and the metrics endpoint remembers a refusal for 30 s.

For OLM deployed from manifests/, `scrape` reads a Pod's `/metrics` as Prometheus does (the Pod's IP,
`pod_metrics_url`), verifying the serving certificate with the CA cert-manager issued (`olmv1_ca`).
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import Mapping
from typing import Any

import aiohttp

from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing import settle

METRICS_READER_ROLE = "operator-controller-metrics-reader"
"""A ClusterRole manifests/ ships for scrapers (manifests/operator-controller/metrics-rbac.yaml); its
one rule opens catalogd's /metrics too."""
METRICS_RULE = {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
FIELD_MANAGER = "olm-metrics-reader"


def cluster_role(name: str = METRICS_READER_ROLE) -> dict[str, Any]:
    return {
        "apiVersion": kinds.CLUSTER_ROLE.api_version,
        "kind": kinds.CLUSTER_ROLE.kind,
        "metadata": {"name": name},
        "rules": [METRICS_RULE],
    }


async def service_account_token(admin: Client, namespace: str, name: str, *, seconds: int = 3600) -> str:
    """A fresh token of ServiceAccount `namespace/name` (created if missing), valid `seconds`."""
    account = {
        "apiVersion": kinds.SERVICE_ACCOUNT.api_version,
        "kind": kinds.SERVICE_ACCOUNT.kind,
        "metadata": {"name": name, "namespace": namespace},
    }
    await admin.apply(account, field_manager=FIELD_MANAGER)
    request = {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": seconds},
    }
    answer = await admin.create_subresource(
        kinds.SERVICE_ACCOUNT, name, "token", request, namespace=namespace
    )
    return str(answer["status"]["token"])


async def reader_token(
    admin: Client,
    *,
    namespace: str = "default",
    name: str = "olm-metrics-scraper",
    role: str = METRICS_READER_ROLE,
) -> str:
    """A token of ServiceAccount `namespace/name`, bound (ClusterRoleBinding `<role>-<namespace>-<name>`)
    to the ClusterRole `role`, which is created with the one metrics rule unless it exists; returned
    once the API server's authorizer has seen the binding, so the first scrape with it is allowed."""
    try:
        await admin.get(kinds.CLUSTER_ROLE, role)
    except errors.NotFound:
        await admin.apply(cluster_role(role), field_manager=FIELD_MANAGER)
    binding = {
        "apiVersion": kinds.CLUSTER_ROLE_BINDING.api_version,
        "kind": kinds.CLUSTER_ROLE_BINDING.kind,
        "metadata": {"name": f"{role}-{namespace}-{name}"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }
    await admin.apply(binding, field_manager=FIELD_MANAGER)
    token = await service_account_token(admin, namespace, name)
    await settle.allowed_path(admin, settle.service_account(namespace, name), verb="get", path="/metrics")
    return token


async def olmv1_ca(admin: Client, namespace: str) -> ssl.SSLContext:
    """Trust in the `olmv1-ca` Secret of OLM's namespace: the CA of both processes' certificates."""
    secret = await admin.get(kinds.SECRET, "olmv1-ca", namespace=namespace)
    return ssl.create_default_context(cadata=base64.b64decode(secret["data"]["ca.crt"]).decode())


def pod_metrics_url(pod: Mapping[str, Any]) -> str:
    """`https://<Pod IP>:<its port named metrics>/metrics`."""
    (container,) = pod["spec"]["containers"]
    (port,) = [p["containerPort"] for p in container["ports"] if p["name"] == "metrics"]
    return f"https://{pod['status']['podIP']}:{port}/metrics"


async def scrape(url: str, trust: ssl.SSLContext, server_name: str, token: str | None) -> tuple[int, str]:
    """GET `url` with `token` (none when None), checking the certificate against `server_name`."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with (
        aiohttp.ClientSession() as session,
        session.get(url, headers=headers, ssl=trust, server_hostname=server_name) as response,
    ):
        return response.status, await response.text()
