"""Collision protection against pre-existing objects, and hand-over between revisions."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.clusterobjectset.conftest import Revisions, absent, config_map, exists, inline
from olm_runtime.client import Client, kinds
from olm_runtime.testing.poll import eventually


async def _pre_existing(client: Client, namespace: str, name: str, *, controlled: bool) -> dict[str, Any]:
    """A ConfigMap made by someone else; `controlled`: with another ConfigMap as its controller."""
    obj = config_map(name, namespace, {"owner": "someone"})
    if controlled:
        boss = await client.create(config_map(f"{name}-boss", namespace))
        obj["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": boss["metadata"]["name"],
                "uid": boss["metadata"]["uid"],
                "controller": True,
            }
        ]
    return await client.create(obj)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(("Prevent", False, False), id="prevent-unowned-collides"),
        pytest.param(("Prevent", True, False), id="prevent-controlled-collides"),
        pytest.param(("IfNoController", False, True), id="if-no-controller-adopts-unowned"),
        pytest.param(("IfNoController", True, False), id="if-no-controller-controlled-collides"),
        pytest.param(("None", False, True), id="none-adopts-unowned"),
        pytest.param(("None", True, True), id="none-adopts-controlled"),
    ],
)
async def test_collision_protection(
    revisions: Revisions, admin_client: Client, namespace: str, case: tuple[str, bool, bool]
) -> None:
    """(strategy, pre-existing object has a controller, revision may adopt it)"""
    strategy, controlled, adopted = case
    await _pre_existing(admin_client, namespace, "taken", controlled=controlled)
    fresh = config_map("fresh", namespace)
    taken = config_map("taken", namespace, {"owner": "revision"})
    await revisions.create("c", [("config", inline(fresh, taken))], collision_protection=strategy)
    if adopted:
        await revisions.wait_for("c", "Progressing", "True", "Succeeded")
        stored = await admin_client.get(kinds.CONFIG_MAP, "taken", namespace=namespace)
        assert stored["data"]["owner"] == "revision"
        controllers = [r for r in stored["metadata"]["ownerReferences"] if r.get("controller")]
        assert [c["kind"] for c in controllers] == ["ClusterObjectSet"]
        return
    retrying = await revisions.wait_for("c", "Progressing", "True", "Retrying")
    assert 'revision object collisions in phase "config"' in retrying["message"]
    assert f"ConfigMap.v1 {namespace}/taken" in retrying["message"]
    if controlled:
        assert "is controlled by ConfigMap taken-boss" in retrying["message"]
    # Nothing of the phase was applied: the other object was not created either.
    assert not await exists(admin_client, kinds.CONFIG_MAP, "fresh", namespace)
    stored = await admin_client.get(kinds.CONFIG_MAP, "taken", namespace=namespace)
    assert stored["data"]["owner"] == "someone"


async def test_an_object_level_override_beats_the_spec(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    await _pre_existing(admin_client, namespace, "taken", controlled=False)
    entry = {"object": config_map("taken", namespace), "collisionProtection": "IfNoController"}
    await revisions.create("o", [("config", [entry])], collision_protection="Prevent")
    await revisions.wait_for("o", "Progressing", "True", "Succeeded")


async def test_revision_two_takes_over_and_revision_one_is_archived(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    shared, old_only, new_only = "shared", "old-only", "new-only"
    rev1 = await revisions.create(
        "r1",
        [("config", inline(config_map(shared, namespace, {"v": "1"}), config_map(old_only, namespace)))],
        owner="ext",
    )
    await revisions.wait_for("r1", "Progressing", "True", "Succeeded")
    rev2 = await revisions.create(
        "r2",
        [("config", inline(config_map(shared, namespace, {"v": "2"}), config_map(new_only, namespace)))],
        owner="ext",
        revision=2,
    )
    await revisions.wait_for("r2", "Progressing", "True", "Succeeded")
    await revisions.wait_for("r1", "Progressing", "False", "Archived")
    await revisions.wait_for("r1", "Available", "Unknown", "Archived")
    assert (await revisions.get("r1"))["spec"]["lifecycleState"] == "Archived"
    await eventually(absent(admin_client, kinds.CONFIG_MAP, old_only, namespace), what="old-only deleted")
    assert await exists(admin_client, kinds.CONFIG_MAP, new_only, namespace)
    stored = await admin_client.get(kinds.CONFIG_MAP, shared, namespace=namespace)
    assert stored["data"] == {"v": "2"}
    uids = [r["uid"] for r in stored["metadata"]["ownerReferences"]]
    assert uids == [rev2["metadata"]["uid"]], (uids, rev1["metadata"]["uid"])
    assert stored["metadata"]["labels"]["olm.operatorframework.io/revision-name"] == rev2["metadata"]["name"]
    assert stored["metadata"]["labels"]["olm.operatorframework.io/owner-kind"] == "ClusterExtension"
    # Archived revisions release their finalizer.
    assert not (await revisions.get("r1"))["metadata"].get("finalizers")
