"""Drift informers run as the revision's ServiceAccount, as far as its RBAC lets them watch.

A ServiceAccount with only `olmctl rbac`'s rules (verbs on named objects, no list or watch) gets no
informer: its objects are read by GET and their drift repaired on the next poll. One that may list
and watch in a namespace gets an informer on that namespace. Informers are shared by the revisions
of one owner and identity, and stop when the last revision using them is gone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from e2e.clusterobjectset.conftest import (
    OPTIONS,
    Revisions,
    absent,
    config_map,
    delete_installer_rbac,
    exists,
    inline,
    olmctl_account,
    running,
)
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.operator_controller.clusterobjectset.watches import DriftWatches
from olm_runtime.client import Client, errors, kinds
from olm_runtime.manager import Manager
from olm_runtime.testing import settle
from olm_runtime.testing.poll import eventually

FIELD_MANAGER = "e2e-drift-rbac"


@pytest.fixture
async def drift(manager: Manager) -> AsyncIterator[DriftWatches]:
    async with running(manager) as watches:
        yield watches


async def _grant_namespace_watch(admin_client: Client, namespace: str, account: str) -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role"}
    await admin_client.apply(
        {
            **role,
            "metadata": {"name": "watch-configmaps", "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]}],
        },
        field_manager=FIELD_MANAGER,
    )
    await admin_client.apply(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "watch-configmaps", "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "watch-configmaps"},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        },
        field_manager=FIELD_MANAGER,
    )
    # The controller decides, as it sets up a revision's drift detection, whether the account may
    # list and watch: return only once the authorizer has seen the grant, so the answer is yes.
    subject = settle.service_account(namespace, account)
    for verb in ("list", "watch"):
        await settle.allowed(admin_client, subject, verb=verb, resource="configmaps", namespace=namespace)


async def _restored(client: Client, namespace: str) -> bool:
    try:
        cm = await client.get(kinds.CONFIG_MAP, "watched", namespace=namespace)
    except errors.NotFound:
        return False
    return cm.get("data") == {"k": "v"}


async def _drift_is_repaired(admin_client: Client, namespace: str) -> None:
    await admin_client.delete(kinds.CONFIG_MAP, "watched", namespace=namespace)
    await eventually(lambda: _restored(admin_client, namespace), what="the deleted ConfigMap to come back")
    await admin_client.patch(kinds.CONFIG_MAP, "watched", {"data": {"k": "changed"}}, namespace=namespace)
    await eventually(lambda: _restored(admin_client, namespace), what="the changed ConfigMap to be restored")


async def test_a_kind_the_account_may_not_watch_is_polled_by_get_and_its_drift_repaired(
    admin_client: Client, namespace: str, drift: DriftWatches
) -> None:
    objects = [config_map("watched", namespace, {"k": "v"})]
    await olmctl_account(admin_client, namespace, "getter", objects)
    revisions = Revisions(admin_client, namespace, "getter")
    try:
        await revisions.create("polled", [("all", inline(*objects))])
        found = await revisions.wait_for("polled", "Progressing", "True", "Succeeded")
        assert found["message"] == "Revision 1 has rolled out."
        # Upstream's message alone on the condition; the polled kinds go to the Event of the change.
        assert await revisions.wait_event("polled", "DriftPolled") == [
            f"Drift of ConfigMap.core objects is checked every {OPTIONS.drift_poll_interval:.0f}s by GET: "
            f"ServiceAccount {namespace}/getter may not list and watch them."
        ]
        assert drift.informers() == []
        assert [str(gvk) for gvk in drift.polled(revisions.name("polled"))] == [str(kinds.CONFIG_MAP)]

        await _drift_is_repaired(admin_client, namespace)

        # Removal: the controller tears the object down as the ServiceAccount, and forgets the kind.
        await admin_client.delete(CLUSTER_OBJECT_SET, revisions.name("polled"))
        await eventually(
            absent(admin_client, CLUSTER_OBJECT_SET, revisions.name("polled")),
            what="the revision to be torn down",
        )
        assert not await exists(admin_client, kinds.CONFIG_MAP, "watched", namespace)
        await eventually(
            lambda: _forgotten(drift, revisions.name("polled")), what="the polled kind to be forgotten"
        )
    finally:
        await revisions.cleanup()
        await delete_installer_rbac(admin_client, "getter")


async def test_an_account_that_may_watch_its_namespace_gets_an_informer_there_until_uninstall(
    admin_client: Client, namespace: str, drift: DriftWatches
) -> None:
    objects = [config_map("watched", namespace, {"k": "v"})]
    await olmctl_account(admin_client, namespace, "watcher", objects)
    await _grant_namespace_watch(admin_client, namespace, "watcher")
    revisions = Revisions(admin_client, namespace, "watcher")
    try:
        await revisions.create("watched", [("all", inline(*objects))])
        found = await revisions.wait_for("watched", "Progressing", "True", "Succeeded")
        assert found["message"] == "Revision 1 has rolled out."
        # The revision's only ConfigMap: its watch names it.
        assert [i.name for i in drift.informers()] == [
            f"v1/configmaps namespace={namespace} "
            f"labels=olm.operatorframework.io/revision-name={revisions.name('watched')} "
            "fields=metadata.name=watched"
        ]

        await _drift_is_repaired(admin_client, namespace)

        await revisions.cleanup()
        await eventually(lambda: _no_informers(drift), what="the drift informer to stop")
    finally:
        await revisions.cleanup()
        await delete_installer_rbac(admin_client, "watcher")


async def _forgotten(drift: DriftWatches, revision: str) -> bool:
    return drift.polled(revision) == []


async def _no_informers(drift: DriftWatches) -> bool:
    return drift.informers() == []


async def test_revisions_of_one_owner_share_an_informer_that_stops_with_the_last_of_them(
    admin_client: Client, namespace: str, account: str, drift: DriftWatches
) -> None:
    revisions = Revisions(admin_client, namespace, account)
    objects = inline(config_map("watched", namespace, {"k": "v"}))
    try:
        await revisions.create("one", [("all", objects)], owner="app")
        await revisions.wait_for("one", "Progressing", "True", "Succeeded")
        await revisions.create("two", [("all", objects)], owner="app", revision=2)
        await revisions.wait_for("two", "Progressing", "True", "Succeeded")
        # One informer for the owner, naming the one ConfigMap both revisions have, in its namespace.
        (informer,) = drift.informers()
        assert informer.name == (
            f"v1/configmaps namespace={namespace} "
            "labels=olm.operatorframework.io/owner-kind=ClusterExtension,"
            f"olm.operatorframework.io/owner-name={revisions.prefix}-app fields=metadata.name=watched"
        )
        await revisions.wait_for("one", "Progressing", "False", "Archived")
        assert drift.informers() == [informer]

        await revisions.cleanup()
        await eventually(lambda: _no_informers(drift), what="the drift informer to stop")
    finally:
        await revisions.cleanup()


async def test_a_kind_with_two_objects_in_a_revision_is_watched_by_label_and_both_are_repaired(
    admin_client: Client, namespace: str, account: str, drift: DriftWatches
) -> None:
    revisions = Revisions(admin_client, namespace, account)
    objects = inline(*(config_map(name, namespace, {"k": "v"}) for name in ("watched", "second")))
    try:
        await revisions.create("two-maps", [("all", objects)], owner="pair")
        await revisions.wait_for("two-maps", "Progressing", "True", "Succeeded")
        # Two ConfigMaps: one watch selects both by the owner's labels, in all namespaces.
        (informer,) = drift.informers()
        assert informer.name == (
            "v1/configmaps labels=olm.operatorframework.io/owner-kind=ClusterExtension,"
            f"olm.operatorframework.io/owner-name={revisions.prefix}-pair"
        )
        await _drift_is_repaired(admin_client, namespace)
        await admin_client.delete(kinds.CONFIG_MAP, "second", namespace=namespace)
        await eventually(
            lambda: exists(admin_client, kinds.CONFIG_MAP, "second", namespace),
            what="the second deleted ConfigMap to come back",
        )
    finally:
        await revisions.cleanup()


async def test_a_polled_rollout_sees_its_probe_pass_long_before_the_drift_poll(
    admin_client: Client, namespace: str, manager: Manager
) -> None:
    """Nothing tells the controller when a polled object changes, and the status stays as it is
    while the rollout waits for the same thing: it must look again by itself, soon."""
    gate = config_map("gate", namespace, {"other": "x"})
    gate["metadata"]["labels"] = {"gate": "yes"}
    probe = {
        "selector": {"type": "Label", "label": {"matchLabels": {"gate": "yes"}}},
        "assertions": [{"type": "FieldValue", "fieldValue": {"fieldPath": "data.ready", "value": "true"}}],
    }
    await olmctl_account(admin_client, namespace, "waiter", [gate])
    revisions = Revisions(admin_client, namespace, "waiter")
    # A drift poll far longer than the test waits: only the rollout's own looks can see the change.
    async with running(manager, dataclasses.replace(OPTIONS, drift_poll_interval=600.0)) as drift:
        try:
            await revisions.create(
                "gated", [("only", inline(gate))], extra_spec={"progressionProbes": [probe]}
            )
            await revisions.wait_for("gated", "Progressing", "True", "RollingOut")
            assert [str(gvk) for gvk in drift.polled(revisions.name("gated"))] == [str(kinds.CONFIG_MAP)]
            await admin_client.patch(
                kinds.CONFIG_MAP, "gate", {"data": {"ready": "true"}}, namespace=namespace
            )
            # The rollout looks again after 1, 2, 4, 8 and 16 s of waiting (a look within a few seconds
            # of the change, here); without those looks the next is the drift poll's, 600 s away.
            await revisions.wait_for("gated", "Progressing", "True", "Succeeded", timeout=20)
        finally:
            await revisions.cleanup()
            await delete_installer_rbac(admin_client, "waiter")
