"""Managed objects are watched: deleted or changed ones are restored; other managers' fields stay."""

from __future__ import annotations

from e2e.clusterobjectset.conftest import Revisions, config_map, deployment, inline
from e2e.clusterobjectset.test_rollout import DEPLOYMENT
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.poll import eventually


async def test_deleted_and_modified_objects_are_restored_and_user_labels_survive(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    await revisions.create(
        "drift", [("all", inline(config_map("watched", namespace, {"k": "v"}), deployment("app", namespace)))]
    )
    await revisions.wait_for("drift", "Progressing", "True", "Succeeded")

    async def restored() -> bool:
        try:
            cm = await admin_client.get(kinds.CONFIG_MAP, "watched", namespace=namespace)
        except errors.NotFound:
            return False
        return cm.get("data") == {"k": "v"}

    await admin_client.delete(kinds.CONFIG_MAP, "watched", namespace=namespace)
    await eventually(restored, what="the deleted ConfigMap to come back")
    await admin_client.patch(kinds.CONFIG_MAP, "watched", {"data": {"k": "changed"}}, namespace=namespace)
    await eventually(restored, what="the modified ConfigMap to be restored")

    await admin_client.patch(
        DEPLOYMENT, "app", {"metadata": {"labels": {"team": "blue"}}}, namespace=namespace
    )
    # Make the revision reconcile again (a change of a field it owns), then check the label stayed.
    await admin_client.patch(DEPLOYMENT, "app", {"spec": {"replicas": 3}}, namespace=namespace)

    async def replicas_restored() -> bool:
        current = await admin_client.get(DEPLOYMENT, "app", namespace=namespace)
        return bool(current["spec"]["replicas"] == 1)

    await eventually(replicas_restored, what="the Deployment's replicas to be restored")
    current = await admin_client.get(DEPLOYMENT, "app", namespace=namespace)
    assert current["metadata"]["labels"]["team"] == "blue"
