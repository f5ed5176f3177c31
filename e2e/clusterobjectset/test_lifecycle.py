"""Progress deadline, deletion teardown and the largest revision the API allows."""

from __future__ import annotations

from e2e.clusterobjectset.conftest import Revisions, absent, config_map, exists, inline
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.client import Client, kinds
from olm_runtime.testing.poll import eventually


async def test_progress_deadline_is_reported_and_recovered_from(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    # The tests run the controller with a deadline minute of 0.3 s: 10 minutes last 3 s.
    probe = {
        "selector": {"type": "Label", "label": {"matchLabels": {"gate": "yes"}}},
        "assertions": [{"type": "FieldValue", "fieldValue": {"fieldPath": "data.ready", "value": "true"}}],
    }
    gate = config_map("gate", namespace, {"other": "x"})
    gate["metadata"]["labels"] = {"gate": "yes"}
    await revisions.create(
        "slow",
        [("only", inline(gate))],
        extra_spec={"progressDeadlineMinutes": 10, "progressionProbes": [probe]},
    )
    exceeded = await revisions.wait_for("slow", "Progressing", "False", "ProgressDeadlineExceeded")
    # Written by hand, the revision has no bundle version: its number stands in.
    assert exceeded["message"] == (
        "Revision has not rolled out for 10 minute(s). Last status: Revision 1 is rolling out."
    )
    # What it waits for goes to the Event of the change, with the revision's number and name.
    said = await revisions.wait_event("slow", "ProgressDeadlineExceeded")
    assert said == [
        f"revision 1 ({revisions.name('slow')}) has not rolled out within 10 minute(s) of its creation; "
        f'last status: Phase "only" is not ready:\n- ConfigMap.v1 {namespace}/gate: missing key: "data.ready"'
    ]
    await admin_client.patch(kinds.CONFIG_MAP, "gate", {"data": {"ready": "true"}}, namespace=namespace)
    await revisions.wait_for("slow", "Progressing", "True", "Succeeded")
    await revisions.wait_for("slow", "Available", "True", "ProbesSucceeded")


async def test_deleting_a_revision_removes_what_it_owns_in_reverse_phase_order(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    held = config_map("b", namespace)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await revisions.create("gone", [("a", inline(config_map("a", namespace))), ("b", inline(held))])
    await revisions.wait_for("gone", "Progressing", "True", "Succeeded")
    await admin_client.delete(CLUSTER_OBJECT_SET, revisions.name("gone"))

    async def b_terminating() -> bool:
        current = await admin_client.get(kinds.CONFIG_MAP, "b", namespace=namespace)
        return bool(current["metadata"].get("deletionTimestamp"))

    await eventually(b_terminating, what="the last phase's object to be deleted first")
    # The earlier phase waits for the later one, and the revision waits for both (its finalizer).
    assert await exists(admin_client, kinds.CONFIG_MAP, "a", namespace)
    assert await exists(admin_client, CLUSTER_OBJECT_SET, revisions.name("gone"))
    await admin_client.patch(kinds.CONFIG_MAP, "b", {"metadata": {"finalizers": None}}, namespace=namespace)
    await eventually(absent(admin_client, kinds.CONFIG_MAP, "a", namespace), what="phase a deleted")
    await eventually(
        absent(admin_client, CLUSTER_OBJECT_SET, revisions.name("gone")), what="the revision to be deleted"
    )


async def test_twenty_phases_of_fifty_objects_roll_out(
    revisions: Revisions, admin_client: Client, namespace: str
) -> None:
    phases = [
        (f"p{p}", inline(*(config_map(f"cm-{p}-{i}", namespace) for i in range(50)))) for p in range(20)
    ]
    await revisions.create("big", phases)
    await revisions.wait_for("big", "Progressing", "True", "Succeeded", timeout=240)
    listed = await admin_client.list(
        kinds.CONFIG_MAP,
        namespace=namespace,
        label_selector=f"olm.operatorframework.io/revision-name={revisions.name('big')}",
    )
    assert len(listed.items) == 1000
