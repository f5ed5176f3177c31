"""`spec.upgrade.onFailure: Rollback` against the real control plane: an update whose revision
misses its progress deadline is rolled back to the previous revision's content by itself, the
failed bundle is held (not tried again) until the spec changes, and a fix then rolls forward.

The update to 1.0.1 is made to fail as in `test_stuck_rollout`: with a node selector no node
matches, its Deployment never becomes Available. The deadline is 10 minutes of the test clock (a
second each).
"""

from __future__ import annotations

from typing import Any

import pytest

from e2e.operator_controller.conftest import (
    Extensions,
    ServedCatalog,
    list_revisions,
    wait_event,
    wait_installed,
    wait_revisions,
)
from e2e.operator_controller.test_removal import revision_objects
from olm.api import conditions as api
from olm.api import names
from olm_runtime import conditions
from olm_runtime.client import errors
from olm_testkit.extensions import extension_object
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

UNSCHEDULABLE = {
    "configType": "Inline",
    "inline": {"deploymentConfig": {"nodeSelector": {"e2e.olm-py.io/no-such-node": "x"}}},
}


def _rolled_back(found: dict[str, Any]) -> bool:
    return bool(((found.get("status") or {}).get("update") or {}).get("rolledBack"))


async def test_a_failed_update_rolls_back_by_itself_and_waits_for_the_admin(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    account = await installer(namespace)
    name = unique("autorb")
    await extensions.create(
        name,
        "test",
        namespace,
        account,
        version="1.0.0",
        selector={"matchLabels": fixture_catalog.label},
    )
    installed = await wait_installed(extensions, name, "1.0.0")
    old_bundle = installed["status"]["install"]["bundle"]["name"]

    # The update to 1.0.1 cannot roll out: after its deadline, revision 3 restores revision 1.
    await extensions.patch_spec(
        name,
        {
            "source": {"catalog": {"version": "1.0.1"}},
            "config": UNSCHEDULABLE,
            "progressDeadlineMinutes": 10,
            "upgrade": {"onFailure": "Rollback"},
        },
    )
    found = await extensions.wait_for(name, "status.update.rolledBack", _rolled_back, timeout=120)
    rolled_back = found["status"]["update"]["rolledBack"]
    failed_bundle = rolled_back["failed"]["name"]
    assert rolled_back == {
        "failed": {"name": failed_bundle, "version": "1.0.1"},
        "restored": {"name": old_bundle, "version": "1.0.0"},
        "reason": api.REASON_PROGRESS_DEADLINE_EXCEEDED,
    }
    await wait_event(
        extensions.kube, name, type="Warning", reason="RolledBack", note_contains="(1.0.1) did not roll out"
    )
    await wait_revisions(
        extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Archived", f"{name}-3": "Active"}
    )
    found = await wait_installed(extensions, name, "1.0.0")
    (third,) = [
        r for r in await list_revisions(extensions.kube, name) if r["metadata"]["name"] == f"{name}-3"
    ]
    assert names.ROLLBACK_ANNOTATION in third["metadata"]["annotations"]
    # The restored objects are revision 1's, not 1.0.0 rendered with the spec that broke 1.0.1
    # (the content digests differ only by the progress deadline, which is part of them).
    (first,) = [
        r for r in await list_revisions(extensions.kube, name) if r["metadata"]["name"] == f"{name}-1"
    ]
    assert await revision_objects(extensions.kube, third) == await revision_objects(extensions.kube, first)

    # The failed bundle is held, not tried again: the spec has not changed since it failed.
    found = await extensions.wait_condition(name, api.TYPE_UPDATE_HELD, "True", reason=api.REASON_ROLLED_BACK)
    assert found["status"]["update"]["held"] == {
        "name": failed_bundle,
        "version": "1.0.1",
        "heldBy": "RolledBack",
    }
    message = conditions.of(found, api.TYPE_UPDATE_HELD)["message"]
    assert (
        "not tried again until the spec changes (for example spec.upgrade.approvedVersion: 1.0.1)" in message
    )
    assert [r["metadata"]["name"] for r in await list_revisions(extensions.kube, name)][-1] == f"{name}-3"

    # The administrator fixes the configuration: the update goes on, and the record goes. (This
    # fixture's 1.0.1 renders exactly as 1.0.0 does, so revision 3's content is reused for it.)
    await extensions.patch_spec(name, {"config": None})
    found = await wait_installed(extensions, name, "1.0.1", timeout=120)
    found = await extensions.wait_for(name, "no rolledBack", lambda f: not _rolled_back(f), timeout=60)
    assert conditions.of(found, api.TYPE_UPDATE_HELD)["reason"] == api.REASON_NOT_HELD
    (current,) = [
        r for r in await list_revisions(extensions.kube, name) if r["metadata"]["name"] == f"{name}-3"
    ]
    assert names.ROLLBACK_ANNOTATION not in current["metadata"]["annotations"]


async def test_rollback_without_a_deadline_is_refused_by_the_api(
    namespace: str, extensions: Extensions
) -> None:
    obj = extension_object(
        unique("autorb-nodeadline"), "test", namespace, "sa", upgrade={"onFailure": "Rollback"}
    )
    with pytest.raises(errors.Invalid) as refused:
        await extensions.kube.create(obj)
    assert "spec.upgrade.onFailure Rollback needs spec.progressDeadlineMinutes" in str(refused.value)
