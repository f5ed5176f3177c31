"""Deletion with preconditions and propagation policies; the garbage collector does the rest."""

from __future__ import annotations

from typing import Any

import pytest

from olm_runtime.client import Client, Preconditions, PropagationPolicy, errors, kinds
from olm_runtime.testing.poll import eventually

from .conftest import config_map, config_map_absent


async def test_delete_with_a_wrong_uid_precondition_is_conflict_and_keeps_the_object(
    client: Client, namespace: str
) -> None:
    created = await client.create(config_map(namespace, "guarded"))
    with pytest.raises(errors.Conflict) as raised:
        await client.delete(
            kinds.CONFIG_MAP, "guarded", namespace=namespace, preconditions=Preconditions(uid="not-the-uid")
        )
    assert "the UID in the precondition (not-the-uid) does not match" in raised.value.message
    assert not await config_map_absent(client, namespace, "guarded")

    await client.delete(
        kinds.CONFIG_MAP,
        "guarded",
        namespace=namespace,
        preconditions=Preconditions(
            uid=created["metadata"]["uid"], resource_version=created["metadata"]["resourceVersion"]
        ),
    )
    assert await config_map_absent(client, namespace, "guarded")


async def test_delete_with_a_stale_resource_version_precondition_is_conflict(
    client: Client, namespace: str
) -> None:
    created = await client.create(config_map(namespace, "moving", {"v": "1"}))
    await client.patch(kinds.CONFIG_MAP, "moving", {"data": {"v": "2"}}, namespace=namespace)
    with pytest.raises(errors.Conflict):
        await client.delete(
            kinds.CONFIG_MAP,
            "moving",
            namespace=namespace,
            preconditions=Preconditions(resource_version=created["metadata"]["resourceVersion"]),
        )


def _owned_by(owner: dict[str, Any], namespace: str, name: str) -> dict[str, Any]:
    dependent = config_map(namespace, name)
    dependent["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            "blockOwnerDeletion": True,
        }
    ]
    return dependent


async def test_foreground_deletion_keeps_the_owner_until_its_dependents_are_gone(
    client: Client, namespace: str
) -> None:
    owner = await client.create(config_map(namespace, "owner"))
    await client.create(_owned_by(owner, namespace, "dependent"))

    answer = await client.delete(
        kinds.CONFIG_MAP, "owner", namespace=namespace, propagation_policy=PropagationPolicy.FOREGROUND
    )
    # Foreground: the server answers with the object, marked for deletion and held by a finalizer.
    assert answer["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in answer["metadata"]["finalizers"]

    async def both_gone() -> bool:
        return await config_map_absent(client, namespace, "dependent") and await config_map_absent(
            client, namespace, "owner"
        )

    await eventually(both_gone, what="the garbage collector to delete dependent, then owner")


async def test_orphan_deletion_keeps_dependents(client: Client, namespace: str) -> None:
    owner = await client.create(config_map(namespace, "parent"))
    await client.create(_owned_by(owner, namespace, "child"))
    await client.delete(
        kinds.CONFIG_MAP, "parent", namespace=namespace, propagation_policy=PropagationPolicy.ORPHAN
    )

    async def orphaned() -> bool:
        child = await client.get(kinds.CONFIG_MAP, "child", namespace=namespace)
        return await config_map_absent(client, namespace, "parent") and not child["metadata"].get(
            "ownerReferences"
        )

    await eventually(orphaned, what="the owner to go and the child to lose its ownerReference")
