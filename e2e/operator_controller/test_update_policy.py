"""`spec.upgrade` against the real control plane: updates a polled catalog brings are found and
reported at once, held by the policy, and applied only as approved.

The package is the real cat-facts-operator 1.0.0 bundle published as successive versions of one
package (`1.0.0 -> 1.0.1 -> 1.1.0`), each replacing the one before, under one tag catalogd polls
every test minute (a second).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from e2e.operator_controller.conftest import (
    CustomCatalogs,
    Extensions,
    cat_facts_chain,
    list_revisions,
    wait_event,
    wait_installed,
    wait_revisions,
)
from e2e.operator_controller.test_crash_safety import crash_after_secrets, owned
from e2e.operator_controller.test_removal import kind_of, revision_objects
from olm.api import conditions as api
from olm.api import names
from olm.cli.commands import EXIT_OK
from olm_runtime import conditions
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.registry import Registry
from olm_testkit.images import realdata
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl
from olm_testkit.plugin import Installer
from olm_testkit.processes import OperatorControllerProcess

PACKAGE = "catfacts-gated"


def _chain(*versions: str) -> realdata.CustomPackage:
    return cat_facts_chain(PACKAGE, *versions)


async def installed_state(extensions: Extensions, name: str) -> dict[str, str]:
    """Every revision of `name` and every object they manage, by identity, with its resourceVersion:
    what must not move while an update waits for approval."""
    found: dict[str, str] = {}
    for cos in await list_revisions(extensions.kube, name):
        found[f"ClusterObjectSet {cos['metadata']['name']}"] = cos["metadata"]["resourceVersion"]
        for obj in await revision_objects(extensions.kube, cos):
            metadata = obj["metadata"]
            # A rendered cluster-scoped object may carry the install namespace; the API ignores it.
            namespaced = (await extensions.kube.resource_for(kind_of(obj))).namespaced
            namespace = metadata.get("namespace") if namespaced else None
            live = await extensions.kube.get(kind_of(obj), metadata["name"], namespace=namespace)
            where = f"{namespace}/" if namespace else ""
            found[f"{obj['kind']} {where}{metadata['name']}"] = live["metadata"]["resourceVersion"]
    return found


async def wait_update(
    extensions: Extensions,
    name: str,
    *,
    available: str | None,
    held: tuple[str, str] | None,
    timeout: float = 120.0,
) -> dict[str, Any]:
    """Until `status.update` names `available` (version) and `held` (version, heldBy)."""

    def matches(found: dict[str, Any]) -> bool:
        update = (found.get("status") or {}).get("update") or {}
        return (update.get("available") or {}).get("version") == available and (
            ((update.get("held") or {}).get("version"), (update.get("held") or {}).get("heldBy"))
            == (held if held is not None else (None, None))
        )

    return await extensions.wait_for(
        name, f"status.update available={available} held={held}", matches, timeout=timeout
    )


async def test_an_update_waits_for_approval_and_nothing_moves_before_it(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    *,
    custom_catalogs: CustomCatalogs,
    operator_controller: OperatorControllerProcess,
    olmctl: Olmctl,
    registry: Registry,
    tmp_path: Path,
) -> None:
    catalog = await custom_catalogs.polled(_chain("1.0.0"), tag="gated")
    account = await installer(namespace)
    name = unique("gated")
    await extensions.create(
        name, PACKAGE, namespace, account, upgrade={"automatic": "None"}, **catalog.fields(namespace)
    )
    found = await wait_installed(extensions, name, "1.0.0")
    assert conditions.of(found, api.TYPE_UPDATE_AVAILABLE)["reason"] == api.REASON_UP_TO_DATE
    assert conditions.of(found, api.TYPE_UPDATE_HELD)["reason"] == api.REASON_NOT_HELD
    before = await installed_state(extensions, name)

    # The tag now holds 1.0.1 and 1.1.0: found within a poll, held for approval.
    await catalog.publish(_chain("1.0.0", "1.0.1", "1.1.0"))
    found = await wait_update(extensions, name, available="1.1.0", held=("1.0.1", "ApprovalRequired"))
    assert found["status"]["update"]["available"]["path"] == [f"{PACKAGE}.v1.0.1", f"{PACKAGE}.v1.1.0"]
    assert conditions.of(found, api.TYPE_UPDATE_HELD)["message"] == (
        f'bundle "{PACKAGE}.v1.0.1" (1.0.1) is waiting for approval: '
        "set spec.upgrade.approvedVersion to 1.0.1 to apply it"
    )
    await wait_event(extensions.kube, name, type="Normal", reason="UpdateAvailable", note_contains="(1.1.0)")
    await wait_event(extensions.kube, name, type="Normal", reason="UpdateHeld", note_contains="(1.0.1)")
    metric = (
        f'olm_clusterextension_update_available{{available="1.1.0",installed="1.0.0",name="{name}",'
        f'package="{PACKAGE}"}} 1.0'
    )
    assert metric in await operator_controller.scrape()
    # The reconciles that found the update (their status says so) moved nothing of the installed
    # revision: no new revision, no object written.
    assert await installed_state(extensions, name) == before
    assert found["status"]["install"]["bundle"]["version"] == "1.0.0"

    # An approval of the older proposal does what it says: 1.0.1, not the newer 1.1.0. olmctl
    # writes it (the version defaults to the held one) after the same preview as `upgrade`.
    pull = ("--registry-ca", str(registry.ca_file), "--cache-dir", str(tmp_path / "cache"))
    approved = await olmctl("upgrade", name, "--approve", *pull)
    assert approved.code == EXIT_OK, approved.err
    assert f"clusterextension/{name} approved 1.0.1; waiting for it" in approved.err
    assert (await extensions.get(name))["spec"]["upgrade"] == {
        "automatic": "None",
        "approvedVersion": "1.0.1",
        # The API server's defaults:
        "permissionGrowth": "Hold",
        "readiness": "None",
        "onFailure": "Stay",
    }
    await wait_installed(extensions, name, "1.0.1")
    await wait_revisions(extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Active"})
    await wait_update(extensions, name, available="1.1.0", held=("1.1.0", "ApprovalRequired"))


async def test_the_policy_applies_patches_and_holds_the_rest(
    namespace: str, installer: Installer, extensions: Extensions, custom_catalogs: CustomCatalogs
) -> None:
    catalog = await custom_catalogs.polled(_chain("1.0.0"), tag="patches")
    account = await installer(namespace)
    name = unique("patches")
    await extensions.create(
        name, PACKAGE, namespace, account, upgrade={"automatic": "Patch"}, **catalog.fields(namespace)
    )
    await wait_installed(extensions, name, "1.0.0")
    await catalog.publish(_chain("1.0.0", "1.0.1", "1.1.0"))
    await wait_installed(extensions, name, "1.0.1")
    found = await wait_update(extensions, name, available="1.1.0", held=("1.1.0", "OutsidePolicy"))
    assert (
        "is a minor update from 1.0.1 and spec.upgrade.automatic is Patch"
        in conditions.of(found, api.TYPE_UPDATE_HELD)["message"]
    )

    # Widening the policy is an edit of the object like any other: the update applies.
    await extensions.patch_spec(name, {"upgrade": {"automatic": "Minor"}})
    await wait_installed(extensions, name, "1.1.0")
    await wait_update(extensions, name, available=None, held=None)


async def test_an_approval_that_cannot_be_reached_or_goes_away_changes_nothing(
    namespace: str, installer: Installer, extensions: Extensions, custom_catalogs: CustomCatalogs
) -> None:
    catalog = await custom_catalogs.polled(_chain("1.0.0", "1.0.1"), tag="unreachable")
    account = await installer(namespace)
    name = unique("unreachable")
    await extensions.create(name, PACKAGE, namespace, account, version="1.0.0", **catalog.fields(namespace))
    await wait_installed(extensions, name, "1.0.0")
    await extensions.patch_spec(
        name,
        {
            "source": {"catalog": {"version": None}},
            "upgrade": {"automatic": "None", "approvedVersion": "9.9.9"},
        },
    )
    found = await extensions.wait_condition(
        name, api.TYPE_UPDATE_HELD, "True", reason=api.REASON_APPROVAL_NOT_REACHABLE
    )
    assert conditions.of(found, api.TYPE_UPDATE_HELD)["message"] == (
        "spec.upgrade.approvedVersion 9.9.9 cannot be installed from 1.0.0: no bundle of that version "
        "is reachable within spec.source.catalog (version, channels, upgrade edges); the newest "
        "reachable is 1.0.1"
    )
    assert found["status"]["install"]["bundle"]["version"] == "1.0.0"
    before = await installed_state(extensions, name)

    # The proposal waiting for approval leaves the catalog: nothing is available, nothing held.
    await extensions.patch_spec(name, {"upgrade": {"approvedVersion": None}})
    await wait_update(extensions, name, available="1.0.1", held=("1.0.1", "ApprovalRequired"))
    await catalog.publish(_chain("1.0.0"))
    found = await wait_update(extensions, name, available=None, held=None)
    assert conditions.of(found, api.TYPE_UPDATE_AVAILABLE)["reason"] == api.REASON_UP_TO_DATE
    assert await installed_state(extensions, name) == before
    assert len(await list_revisions(extensions.kube, name)) == 1


async def test_an_approval_survives_a_crash_between_its_secrets_and_its_revision(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    custom_catalogs: CustomCatalogs,
    *,
    operator_controller: OperatorControllerProcess,
    control_plane: ControlPlane,
    tmp_path: Path,
) -> None:
    """operator-controller killed after the approved version's Secrets and before its revision:
    nothing of it is applied, the installed revision does not move, and the next process rolls
    the approved version out once, from the same Secrets."""
    catalog = await custom_catalogs.polled(_chain("1.0.0"), tag="crash")
    account = await installer(namespace)
    name = unique("approved-crash")
    await extensions.create(
        name, PACKAGE, namespace, account, upgrade={"automatic": "None"}, **catalog.fields(namespace)
    )
    await wait_installed(extensions, name, "1.0.0")
    await catalog.publish(_chain("1.0.0", "1.0.1"))
    await wait_update(extensions, name, available="1.0.1", held=("1.0.1", api.REASON_APPROVAL_REQUIRED))
    before = await installed_state(extensions, name)
    try:
        assert operator_controller.stop() == 0, operator_controller.log_tail()
        approve = functools.partial(extensions.patch_spec, name, {"upgrade": {"approvedVersion": "1.0.1"}})
        await crash_after_secrets(control_plane, tmp_path / "crashing", approve)
        revisions, secrets = await owned(extensions.kube, name)
        assert [r["metadata"]["name"] for r in revisions] == [f"{name}-1"]
        orphans = [s for s in secrets if s["metadata"]["labels"][names.REVISION_NAME_LABEL] == f"{name}-2"]
        assert orphans, "the crash came after the approved revision's Secrets: some must exist"
        assert await installed_state(extensions, name) == before

        operator_controller.start()
        await operator_controller.wait_ready()
        await wait_installed(extensions, name, "1.0.1", timeout=180)
        revisions = await wait_revisions(extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Active"})
        _, secrets = await owned(extensions.kube, name)
        second = revisions[-1]["metadata"]
        for secret in (
            s for s in secrets if s["metadata"]["labels"][names.REVISION_NAME_LABEL] == f"{name}-2"
        ):
            owners = [(o["name"], o["uid"]) for o in secret["metadata"].get("ownerReferences") or []]
            assert owners == [(second["name"], second["uid"])], secret["metadata"]
    finally:
        if operator_controller.process is None:
            operator_controller.start()
            await operator_controller.wait_ready()
