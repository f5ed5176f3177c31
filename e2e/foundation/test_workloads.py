"""The control plane runs workloads as a cluster would: kwok nodes run Pods, the garbage collector
follows ownerReferences."""

from __future__ import annotations

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from olm_runtime.testing.poll import eventually


async def test_deployment_becomes_available_with_pods_running_on_kwok_nodes(
    api_client: client.ApiClient, namespace: str
) -> None:
    apps = client.AppsV1Api(api_client)
    core = client.CoreV1Api(api_client)
    labels = {"app": "web"}
    # Bodies are plain dicts, which the client serializes as-is; its stubs accept only the model classes.
    await apps.create_namespaced_deployment(
        namespace,
        {  # type: ignore[arg-type]
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                },
            },
        },
    )

    async def available() -> bool:
        deployment = await apps.read_namespaced_deployment("web", namespace)
        conditions = deployment.status.conditions or []
        return deployment.status.available_replicas == 3 and any(
            c.type == "Available" and c.status == "True" for c in conditions
        )

    await eventually(available, what="Deployment web to become Available")
    pods = (await core.list_namespaced_pod(namespace, label_selector="app=web")).items
    assert len(pods) == 3
    assert all(p.status.phase == "Running" for p in pods)
    assert all(p.spec.node_name and p.spec.node_name.startswith("kwok-node-") for p in pods)


async def test_deleting_an_owner_garbage_collects_its_dependents(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    owner = await core.create_namespaced_config_map(namespace, {"metadata": {"name": "owner"}})  # type: ignore[arg-type]
    reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
    for index in range(3):
        await core.create_namespaced_config_map(
            namespace,
            {"metadata": {"name": f"dependent-{index}", "ownerReferences": [reference]}},  # type: ignore[arg-type]
        )
    await core.create_namespaced_config_map(namespace, {"metadata": {"name": "bystander"}})  # type: ignore[arg-type]

    await core.delete_namespaced_config_map("owner", namespace)

    async def dependents_gone() -> bool:
        names = {cm.metadata.name for cm in (await core.list_namespaced_config_map(namespace)).items}
        return not any(name.startswith("dependent-") for name in names)

    await eventually(dependents_gone, what="the garbage collector to delete the dependents")
    bystander = await core.read_namespaced_config_map("bystander", namespace)
    assert bystander.metadata.name == "bystander"
    with pytest.raises(ApiException) as gone:
        await core.read_namespaced_config_map("owner", namespace)
    assert gone.value.status == 404
