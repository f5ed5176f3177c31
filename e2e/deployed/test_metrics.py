"""The deployed Pods' `/metrics`, scraped as Prometheus scrapes them with manifests/monitoring: each
Pod's IP, HTTPS verified with the olmv1-ca CA and the Service's DNS name, a ServiceAccount's token.

Only a caller the API server allows `get /metrics` reads them: the shipped `*-metrics-reader`
ClusterRoles grant that, and the Pods review tokens with the shipped metrics-rbac.yaml permissions.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator

import pytest

from e2e.deployed.conftest import CATALOGD, OPERATOR_CONTROLLER, SYSTEM_NAMESPACE, DeployedOLM
from olm_runtime.client import errors, kinds
from olm_testkit import metricsreader

SERVICES = {CATALOGD: "catalogd-service", OPERATOR_CONTROLLER: "operator-controller-service"}
READER_ROLES = {
    CATALOGD: "catalogd-metrics-reader",
    OPERATOR_CONTROLLER: "operator-controller-metrics-reader",
}


@pytest.fixture
async def scraper_namespace(deployed: DeployedOLM) -> AsyncIterator[str]:
    name = f"scrapers-{uuid.uuid4().hex[:8]}"
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    await deployed.kube.apply(namespace, field_manager="e2e-deployed")
    yield name
    for role in READER_ROLES.values():
        with contextlib.suppress(errors.NotFound):
            await deployed.kube.delete(kinds.CLUSTER_ROLE_BINDING, f"{role}-{name}-reader")
    await deployed.kube.delete(kinds.NAMESPACE, name)


@pytest.mark.parametrize("deployment", [CATALOGD, OPERATOR_CONTROLLER])
async def test_every_pod_serves_metrics_to_metrics_readers_only(
    deployed: DeployedOLM, scraper_namespace: str, deployment: str
) -> None:
    role = READER_ROLES[deployment]
    await deployed.kube.get(kinds.CLUSTER_ROLE, role)  # shipped: the helper below must not make it
    reader = await metricsreader.reader_token(
        deployed.kube, namespace=scraper_namespace, name="reader", role=role
    )
    stranger = await metricsreader.service_account_token(deployed.kube, scraper_namespace, "stranger")
    trust = await metricsreader.olmv1_ca(deployed.kube, SYSTEM_NAMESPACE)
    server_name = f"{SERVICES[deployment]}.{SYSTEM_NAMESPACE}.svc"
    pods = await deployed.pods(deployment)
    assert pods
    for pod in pods:
        url = metricsreader.pod_metrics_url(pod)

        assert (await metricsreader.scrape(url, trust, server_name, None))[0] == 401, pod["metadata"]["name"]
        denied = f"Authorization denied for user system:serviceaccount:{scraper_namespace}:stranger\n"
        assert await metricsreader.scrape(url, trust, server_name, stranger) == (403, denied)
        status, text = await metricsreader.scrape(url, trust, server_name, reader)
        assert status == 200, (pod["metadata"]["name"], text[:300])
        assert "controller_runtime_reconcile_total" in text
        assert "workqueue_depth" in text
        assert "apiserver_delegated_authz_request_total" in text
