"""OLM deployed from a release's install.yaml on real nodes: what a user sees after `kubectl apply`.

Every test that installs kube-green removes it again before it ends: its CRDs and cluster roles
are cluster-scoped, so two extensions of it would collide.
"""

from __future__ import annotations

import json
from typing import Any

from e2e.deployed.conftest import (
    CATALOGD,
    IMAGE_REPOSITORY,
    OPERATOR_CONTROLLER,
    SYSTEM_NAMESPACE,
    DemoExtensions,
    DeployedOLM,
    OLMRelease,
    ServedCatalog,
    assert_no_orphans,
)
from olm.api import names
from olm_runtime.client import kinds
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import node as real_nodes
from olm_testkit.deploy import install as deploy
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique


async def test_olm_runs_as_pods_on_the_real_nodes_with_catalogd_spread_over_them(
    deployed: DeployedOLM,
) -> None:
    for deployment, replicas in ((CATALOGD, 2), (OPERATOR_CONTROLLER, 1)):
        pods = await deployed.pods(deployment)
        assert len(pods) == replicas, [p["metadata"]["name"] for p in pods]
        # One catalogd replica per node, after the rollouts of the upgrade and rollback too: a
        # node lost takes one replica with it, never both.
        nodes = {deployed.node_of(pod).name for pod in pods}
        assert len(nodes) == replicas, (deployment, nodes)
        for pod in pods:
            assert pod["status"]["phase"] == "Running"
            container = pod["spec"]["containers"][0]
            assert container["image"] == deployed.image
            # The shipped security context is what runs: non-root, read-only root filesystem.
            assert container["securityContext"]["readOnlyRootFilesystem"] is True
            assert pod["spec"]["securityContext"]["runAsUser"] == 65532


async def test_the_pods_run_the_version_the_release_was_built_as(
    deployed: DeployedOLM, olm_release: OLMRelease, registry: Registry
) -> None:
    build = olm_release.release.build
    assert build.commit[:12] in build.python  # this checkout is a snapshot (CI has no tags)
    for deployment in (CATALOGD, OPERATOR_CONTROLLER):
        for pod in await deployed.pods(deployment):
            log = await deployed.log(pod["metadata"]["name"], tail=None)
            entries = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
            versions = [entry.get("version") for entry in entries if entry.get("event") == "version"]
            assert versions == [build.python], pod["metadata"]["name"]
    client = RegistryClient(host=registry.host, ca_file=registry.ca_file)
    manifest = json.loads(client.manifest(IMAGE_REPOSITORY, olm_release.release.digest))
    config = json.loads(client.blob(IMAGE_REPOSITORY, manifest["config"]["digest"]))
    labels = config["config"]["Labels"]
    assert labels["org.opencontainers.image.version"] == build.python
    assert labels["org.opencontainers.image.revision"] == build.commit


async def test_webhook_labels_a_catalog_created_without_the_label(demo_catalog: ServedCatalog) -> None:
    labels = demo_catalog.catalog["metadata"].get("labels") or {}
    assert labels.get(names.METADATA_NAME_LABEL) == demo_catalog.name
    base = demo_catalog.catalog["status"]["urls"]["base"]
    assert base == f"https://catalogd-service.{SYSTEM_NAMESPACE}.svc/catalogs/{demo_catalog.name}"


async def test_catalog_content_is_served_through_the_service(
    deployed: DeployedOLM, demo_catalog: ServedCatalog
) -> None:
    status, body = deployed.control_plane.rest.raw("GET", content_path(demo_catalog.name, "olm.package"))
    assert status == 200, body[:300]
    packages = {json.loads(line)["name"] for line in body.decode().splitlines() if line.strip()}
    assert packages == {"kube-green", "cat-facts-operator"}
    # Each replica, asked directly: a follower that has not pulled the catalog yet fetches it then.
    for pod in await deployed.pods(CATALOGD):
        name = pod["metadata"]["name"]
        status, direct = deployed.control_plane.rest.raw("GET", pod_content_path(name, demo_catalog.name))
        assert (status, direct) == (200, body), (name, direct[:300])


async def test_install_upgrade_and_remove_a_real_extension(
    deployed: DeployedOLM, extensions: DemoExtensions, namespace: str
) -> None:
    name = unique("kube-green")
    account = await extensions.installer(namespace)
    await extensions.install(name, "kube-green", namespace, account, version="0.7.0")
    found = await extensions.wait_installed(name, "0.7.0")
    assert found["status"]["install"]["bundle"]["name"] == "kube-green.v0.7.0"
    # The extension's workload lands on a kwok node: only OLM's own namespace asks for the real one.
    await wait_deployment_available(deployed, namespace, "kube-green-controller-manager")

    await extensions.set_version(name, "0.7.1")
    await extensions.wait_installed(name, "0.7.1")
    await extensions.wait_active_revisions(name, [f"{name}-2"])
    assert_no_orphans(*await extensions.revisions(name))

    await extensions.delete(name)
    revisions, secrets = await extensions.revisions(name)
    assert (revisions, secrets) == ([], [])
    deployments = await deployed.kube.list(kinds.DEPLOYMENT, namespace=namespace)
    assert deployments.items == []


async def test_logs_are_json_lines_read_with_the_pods_log_api(deployed: DeployedOLM) -> None:
    for deployment in deploy.DEPLOYMENTS:
        pod = (await deployed.pods(deployment))[0]["metadata"]["name"]
        lines = [line for line in (await deployed.log(pod)).splitlines() if line.strip()]
        assert lines, f"{pod} logged nothing"
        for line in lines:
            record = json.loads(line)
            assert {"event", "level", "timestamp"} <= set(record), record


async def test_operator_controller_reaches_catalogd_through_cluster_dns(
    deployed: DeployedOLM, extensions: DemoExtensions, namespace: str
) -> None:
    """Resolution reads the catalog at `catalogd-service.olmv1-system.svc`: a Pod resolved the name
    through CoreDNS and reached a catalogd Pod through kube-proxy's rules."""
    name = unique("resolve")
    account = await extensions.installer(namespace)
    await extensions.install(name, "kube-green", namespace, account, version="0.7.x")
    try:
        found = await extensions.wait_installed(name, "0.7.1")
        bundle = found["status"]["install"]["bundle"]
        assert bundle == {"name": "kube-green.v0.7.1", "version": "0.7.1"}
    finally:
        await extensions.delete(name)


def content_path(catalog: str, schema: str) -> str:
    return (
        f"/api/v1/namespaces/{SYSTEM_NAMESPACE}/services/https:catalogd-service:https/proxy"
        f"/catalogs/{catalog}/api/v1/metas?schema={schema}"
    )


def pod_content_path(pod: str, catalog: str) -> str:
    return (
        f"/api/v1/namespaces/{SYSTEM_NAMESPACE}/pods/https:{pod}:8443/proxy"
        f"/catalogs/{catalog}/api/v1/metas?schema=olm.package"
    )


async def wait_deployment_available(deployed: DeployedOLM, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = {}

    async def available() -> bool:
        nonlocal found
        found = dict(await deployed.kube.get(kinds.DEPLOYMENT, name, namespace=namespace))
        return bool((found.get("status") or {}).get("availableReplicas"))

    await eventually(available, what=f"Deployment {namespace}/{name} to be available", timeout=120)
    pods = await deployed.kube.list(kinds.POD, namespace=namespace)
    for pod in pods.items:
        assert pod["spec"].get("nodeName", "").startswith("kwok-node-"), pod["spec"].get("nodeName")
        tolerations = pod["spec"].get("tolerations") or []
        assert all(t.get("key") != real_nodes.TAINT_KEY for t in tolerations)
    return found


async def test_a_pod_that_cannot_reach_the_api_server_names_the_address_and_exits_1(
    deployed: DeployedOLM, namespace: str
) -> None:
    """A Pod network that cannot reach the API server: the process says where it tried and exits."""
    await deployed.kube.patch(
        kinds.NAMESPACE, namespace, {"metadata": {"annotations": real_nodes.placement_annotations()}}
    )
    # The control plane's address (on the first node network) is reachable from every node.
    control_plane_ip = deployed.nodes[0].network.host_ip
    unreachable = f"https://{control_plane_ip}:1"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "no-api-server", "namespace": namespace},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "manager",
                    "image": deployed.image,
                    "command": ["operator-controller", "--api-server-timeout=3", "--log-format=json"],
                    # Overrides what the kubelet sets for the `kubernetes` Service.
                    "env": [
                        {"name": "KUBERNETES_SERVICE_HOST", "value": control_plane_ip},
                        {"name": "KUBERNETES_SERVICE_PORT", "value": "1"},
                    ],
                }
            ],
        },
    }
    await deployed.kube.create(pod)
    found: dict[str, Any] = {}

    async def terminated() -> bool:
        nonlocal found
        found = dict(await deployed.kube.get(kinds.POD, "no-api-server", namespace=namespace))
        return (found.get("status") or {}).get("phase") in ("Failed", "Succeeded")

    await eventually(terminated, what="the Pod to terminate", timeout=120)
    assert found["spec"]["nodeName"] in {node.name for node in deployed.nodes}
    status, body = deployed.control_plane.rest.raw(
        "GET", f"/api/v1/namespaces/{namespace}/pods/no-api-server/log?container=manager"
    )
    assert status == 200, body[:300]
    state = found["status"]["containerStatuses"][0]["state"]["terminated"]
    assert state["exitCode"] == 1, (state, body.decode()[-2000:])
    errors_logged = [
        record
        for record in (json.loads(line) for line in body.decode().splitlines() if line.startswith("{"))
        if record.get("level") == "error"
    ]
    assert [(r["event"], r["address"]) for r in errors_logged] == [
        ("startup.api_server_unreachable", unreachable)
    ], body.decode()[-2000:]
