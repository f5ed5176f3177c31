"""Shared drift watches (`Options.shared_drift_watches`): one informer per kind, as the controller,
for the managed objects of every revision, whatever their owner and ServiceAccount.

The controller here runs as cluster-admin, so it may watch every kind everywhere: even a
ServiceAccount that may not list or watch its kind (`olmctl rbac`'s rules) gets its drift repaired
through the shared informer instead of polls. What the shared informer shows never replaces a
judgement: another owner's object is still a collision. Falling back to the ServiceAccounts for a
kind the controller may not watch is tested in `unit/.../test_watch_reviews.py` and, with the shipped
component's RBAC, in `e2e/operator_controller/test_rbac.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from e2e.clusterobjectset.conftest import (
    OPTIONS,
    Revisions,
    config_map,
    delete_installer_rbac,
    inline,
    olmctl_account,
    running,
)
from olm.operator_controller.clusterobjectset.watches import DriftWatches
from olm_runtime.client import Client, errors, kinds
from olm_runtime.manager import Manager
from olm_runtime.testing.poll import eventually

SHARED_CONFIG_MAPS = "v1/configmaps labels=olm.operatorframework.io/revision-name"


@pytest.fixture
async def shared(manager: Manager) -> AsyncIterator[DriftWatches]:
    async with running(manager, dataclasses.replace(OPTIONS, shared_drift_watches=True)) as watches:
        yield watches


async def _data(client: Client, namespace: str, name: str) -> dict[str, str] | None:
    try:
        cm = await client.get(kinds.CONFIG_MAP, name, namespace=namespace)
    except errors.NotFound:
        return None
    return dict(cm.get("data") or {})


async def test_owners_and_accounts_share_one_informer_per_kind_that_repairs_drift(
    admin_client: Client, namespace: str, account: str, shared: DriftWatches
) -> None:
    getter_objects = [config_map("of-getter", namespace, {"k": "getter"})]
    await olmctl_account(admin_client, namespace, "getter", getter_objects)
    revisions = Revisions(admin_client, namespace, account)
    try:
        await revisions.create("a", [("all", inline(*getter_objects))], owner="a", service_account="getter")
        await revisions.create(
            "b", [("all", inline(config_map("of-installer", namespace, {"k": "installer"})))], owner="b"
        )
        for suffix in ("a", "b"):
            found = await revisions.wait_for(suffix, "Progressing", "True", "Succeeded")
            # No "checked every ...s by GET": the getter's kind is watched, by the controller.
            assert found["message"] == "Revision 1 has rolled out."
            assert shared.polled(revisions.name(suffix)) == []
        assert [i.name for i in shared.informers()] == [SHARED_CONFIG_MAPS]

        await admin_client.delete(kinds.CONFIG_MAP, "of-getter", namespace=namespace)
        await admin_client.patch(
            kinds.CONFIG_MAP, "of-installer", {"data": {"k": "changed"}}, namespace=namespace
        )

        async def both_restored() -> bool:
            return (
                await _data(admin_client, namespace, "of-getter"),
                await _data(admin_client, namespace, "of-installer"),
            ) == ({"k": "getter"}, {"k": "installer"})

        await eventually(both_restored, what="the deleted and the changed ConfigMap to be restored")

        await revisions.cleanup()
        await eventually(lambda: _no_informers(shared), what="the shared informer to stop")
    finally:
        await revisions.cleanup()
        await delete_installer_rbac(admin_client, "getter")


async def test_another_owners_object_seen_in_the_shared_informer_is_a_collision(
    admin_client: Client, namespace: str, account: str, shared: DriftWatches
) -> None:
    revisions = Revisions(admin_client, namespace, account)
    try:
        await revisions.create(
            "first", [("all", inline(config_map("taken", namespace, {"k": "first"})))], owner="a"
        )
        await revisions.wait_for("first", "Progressing", "True", "Succeeded")
        await revisions.create(
            "second",
            [
                (
                    "all",
                    inline(config_map("fresh", namespace), config_map("taken", namespace, {"k": "second"})),
                )
            ],
            owner="b",
        )
        retrying = await revisions.wait_for("second", "Progressing", "True", "Retrying")
        assert 'revision object collisions in phase "all"' in retrying["message"]
        assert f"ConfigMap.v1 {namespace}/taken" in retrying["message"]
        assert f"ClusterObjectSet {revisions.name('first')}" in retrying["message"]
        assert await _data(admin_client, namespace, "taken") == {"k": "first"}
        assert await _data(admin_client, namespace, "fresh") is None
    finally:
        await revisions.cleanup()


async def _no_informers(drift: DriftWatches) -> bool:
    return drift.informers() == []
