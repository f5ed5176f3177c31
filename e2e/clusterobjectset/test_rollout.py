"""Phases roll out in order, each gated by its probes; status walks RollingOut -> Succeeded."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from e2e.clusterobjectset.conftest import CRD, Revisions, config_map, deployment, exists, inline
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import Client, GroupVersionKind, kinds
from olm_runtime.testing import settle
from olm_runtime.testing.poll import eventually

DEPLOYMENT = GroupVersionKind("apps", "v1", "Deployment")
PVC = GroupVersionKind("", "v1", "PersistentVolumeClaim")
PV = GroupVersionKind("", "v1", "PersistentVolume")


def crd(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


async def test_three_phases_roll_out_in_order_and_succeed(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    group = f"{uuid.uuid4().hex[:8]}.example.com"
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "app", "namespace": namespace},
        "rules": [{"apiGroups": [group], "resources": ["widgets"], "verbs": ["get"]}],
    }
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "app", "namespace": namespace},
    }
    cos = await revisions.create(
        "app",
        [
            ("crds", inline(crd(group))),
            ("rbac", inline(account, role)),
            ("deploy", inline(deployment("app", namespace))),
        ],
    )
    # A watch from the creation sees every status write; polling could miss a short RollingOut.
    seen: list[str] = []
    name = cos["metadata"]["name"]
    async with asyncio.timeout(60):
        async with admin_client.watch(
            CLUSTER_OBJECT_SET,
            field_selector=f"metadata.name={name}",
            resource_version=cos["metadata"]["resourceVersion"],
        ) as events:
            async for event in events:
                found = conditions.find(
                    (event.object.get("status") or {}).get("conditions") or [], "Progressing"
                )
                reason = str((found or {}).get("reason"))
                if not seen or seen[-1] != reason:
                    seen.append(reason)
                if reason == "Succeeded":
                    break
    assert "RollingOut" in seen, seen
    assert seen[-1] == "Succeeded"
    available = await revisions.condition("app", "Available")
    assert (available["status"], available["reason"]) == ("True", "ProbesSucceeded")
    assert (await revisions.condition("app", "Succeeded"))["status"] == "True"

    stored_crd = await admin_client.get(CRD, f"widgets.{group}")
    established = conditions.find(stored_crd["status"]["conditions"], "Established")
    assert established is not None
    deployed = await admin_client.get(DEPLOYMENT, "app", namespace=namespace)
    assert deployed["metadata"]["creationTimestamp"] >= established["lastTransitionTime"]
    owner = deployed["metadata"]["ownerReferences"]
    assert owner == [
        {
            "apiVersion": "olm.operatorframework.io/v1",
            "kind": "ClusterObjectSet",
            "name": cos["metadata"]["name"],
            "uid": cos["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    stored = await revisions.get("app")
    assert [p["name"] for p in stored["status"]["observedPhases"]] == ["crds", "rbac", "deploy"]
    assert stored["metadata"]["finalizers"] == ["olm.operatorframework.io/teardown"]
    # The recorder writes Events in the background: the status can be read before they land.
    assert await revisions.wait_event("app", "PhaseSucceeded")
    assert await revisions.wait_event("app", "Succeeded") == ["revision 1 rolled out"]


async def test_a_pending_pvc_blocks_the_next_phase_until_bound(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    # The user probe repeats the built-in check of a PVC: one check, reported once.
    bound = {
        "selector": {"type": "GroupKind", "groupKind": {"group": "", "kind": "PersistentVolumeClaim"}},
        "assertions": [{"type": "FieldValue", "fieldValue": {"fieldPath": "status.phase", "value": "Bound"}}],
    }
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data", "namespace": namespace},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "",
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    await revisions.create(
        "pvc",
        [("storage", inline(claim)), ("config", inline(config_map("after", namespace)))],
        extra_spec={"progressionProbes": [bound]},
    )
    pending = 'value at key "status.phase" != "Bound"; expected: "Bound" got: "Pending"'
    failure = await revisions.wait_for("pvc", "Available", "False", "ProbeFailure")
    assert failure["message"] == f"Object PersistentVolumeClaim.v1 {namespace}/data: {pending}"
    # The phase and every failing object go to the Event of the change.
    said = await revisions.wait_event("pvc", "ProbeFailure")
    assert f'Phase "storage" is not ready:\n- PersistentVolumeClaim.v1 {namespace}/data: {pending}' in said
    assert not await exists(admin_client, kinds.CONFIG_MAP, "after", namespace)

    volume = f"{namespace}-pv"
    await admin_client.create(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": volume},
            "spec": {
                "capacity": {"storage": "1Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "",
                "hostPath": {"path": "/tmp/data"},
                "claimRef": {"namespace": namespace, "name": "data"},
            },
        }
    )
    try:
        await revisions.wait_for("pvc", "Progressing", "True", "Succeeded")
        assert await exists(admin_client, kinds.CONFIG_MAP, "after", namespace)
    finally:
        await admin_client.delete(PV, volume)


async def test_a_user_probe_blocks_until_the_field_has_the_value(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    probe = {
        "selector": {"type": "GroupKind", "groupKind": {"group": "", "kind": "ConfigMap"}},
        "assertions": [{"type": "FieldValue", "fieldValue": {"fieldPath": "data.foo", "value": "bar"}}],
    }
    later = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "later", "namespace": namespace}}
    await revisions.create(
        "probe",
        [("first", inline(config_map("gate", namespace, {"other": "x"}))), ("second", inline(later))],
        extra_spec={"progressionProbes": [probe]},
    )
    failure = await revisions.wait_for("probe", "Available", "False", "ProbeFailure")
    assert failure["message"] == f'Object ConfigMap.v1 {namespace}/gate: missing key: "data.foo"'
    await admin_client.patch(kinds.CONFIG_MAP, "gate", {"data": {"foo": "baz"}}, namespace=namespace)
    failure = await revisions.wait_for("probe", "Available", "False", "ProbeFailure", contains="got:")
    assert failure["message"] == (
        f'Object ConfigMap.v1 {namespace}/gate: value at key "data.foo" != "bar"; expected: "bar" got: "baz"'
    )
    assert not await exists(admin_client, kinds.SECRET, "later", namespace)

    # data.foo is not part of the revision's content, so a user may set it and it stays.
    await admin_client.patch(kinds.CONFIG_MAP, "gate", {"data": {"foo": "bar"}}, namespace=namespace)
    await revisions.wait_for("probe", "Progressing", "True", "Succeeded")
    assert await exists(admin_client, kinds.SECRET, "later", namespace)


async def test_a_crd_that_is_never_established_holds_back_the_deployment(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    group = f"{uuid.uuid4().hex[:8]}.example.com"
    await admin_client.create(crd(group))  # owns the singular name "widget" in the group
    # Until its names are accepted (Established, then served), the clashing CRD below could win them.
    await settle.crd_served(admin_client, f"widgets.{group}")
    clashing = crd(group)
    clashing["metadata"]["name"] = f"gadgets.{group}"
    clashing["spec"]["names"] = {"kind": "Gadget", "plural": "gadgets", "singular": "widget"}
    await revisions.create(
        "clash", [("crds", inline(clashing)), ("deploy", inline(deployment("app", namespace)))]
    )
    failure = await revisions.wait_for("clash", "Available", "False", "ProbeFailure", contains="Established")
    # Cluster-scoped: upstream writes an empty namespace before the slash.
    assert failure["message"].startswith(
        f"Object CustomResourceDefinition.apiextensions.k8s.io/v1 /gadgets.{group}: "
    )
    assert not await exists(admin_client, DEPLOYMENT, "app", namespace)
    await admin_client.delete(CRD, f"widgets.{group}")  # gadgets goes with the revision


async def test_an_aggregated_cluster_role_keeps_the_rules_the_control_plane_aggregates(
    revisions: Revisions, admin_client: Client
) -> None:
    """kube-green 0.6.0 ships such a role with `rules: []`: applied as written, it fought
    kube-controller-manager's aggregation controller on every reconcile."""
    suffix = uuid.uuid4().hex[:8]
    label = f"e2e.olm/aggregate-to-{suffix}"
    aggregated = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": f"manager-{suffix}"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {label: "true"}}]},
        "rules": [],
    }
    rules = [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]}]
    part = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": f"part-{suffix}", "labels": {label: "true"}},
        "rules": rules,
    }
    await revisions.create("aggregated", [("rbac", inline(part, aggregated))])
    await revisions.wait_for("aggregated", "Succeeded", "True", "Succeeded")
    role = GroupVersionKind("rbac.authorization.k8s.io", "v1", "ClusterRole")

    async def aggregated_rules() -> bool:
        found = await admin_client.get(role, f"manager-{suffix}")
        return found.get("rules") == rules

    await eventually(aggregated_rules, what="the aggregation controller to fill the role's rules")
    found = await admin_client.get(role, f"manager-{suffix}")
    # Nothing may write the role once its rules are aggregated. What this asserts is an absence, so
    # it watches for a while: the fight wrote it every few milliseconds.
    writes: list[str] = []
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(5):
            async with admin_client.watch(
                role,
                field_selector=f"metadata.name=manager-{suffix}",
                resource_version=found["metadata"]["resourceVersion"],
            ) as events:
                async for event in events:
                    if event.type != "BOOKMARK":
                        writes.append(f"{event.type} rules={event.object.get('rules')}")
    assert writes == [], writes[:5]
