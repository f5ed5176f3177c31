"""The permission-growth gate (roadmap F14) on a real bundle whose RBAC grows: infinispan 2.3.0 ->
2.3.8 (2.3.1 added cluster-wide `get,list,watch` on roles and rolebindings, which 2.3.8 keeps).

The update is held with exactly the added rules and nothing of the installed revision moves; the
approval of that version releases it.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from e2e.operator_controller.conftest import Extensions, ServedCatalog, wait_event, wait_installed
from e2e.operator_controller.test_update_policy import installed_state, wait_update
from e2e.operator_controller.test_upgrades import install_infinispan_2_3_0
from olm.api import conditions as api
from olm.cli.commands import EXIT_OK
from olm_runtime import conditions
from olm_runtime.testing.registry import Registry
from olm_testkit.certmanager import CertManager
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl
from olm_testkit.plugin import Installer

ADDED = [
    'Namespace:"" APIGroups:[rbac.authorization.k8s.io] Resources:[rolebindings] Verbs:[get,list,watch]',
    'Namespace:"" APIGroups:[rbac.authorization.k8s.io] Resources:[roles] Verbs:[get,list,watch]',
]


async def test_an_update_that_grants_more_waits_for_its_approval(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    community_catalog: ServedCatalog,
    *,
    cert_manager: CertManager,
    olmctl: Olmctl,
    registry: Registry,
    tmp_path: Path,
) -> None:
    account = await installer(namespace)
    name = unique("growth")
    await install_infinispan_2_3_0(extensions, community_catalog, name, namespace=namespace, account=account)
    before = await installed_state(extensions, name)

    # The range now admits 2.3.8 (which skips 2.3.0); the installer may do all of it, but the
    # rules the operator would be granted grew, so the update waits.
    await extensions.patch_spec(name, {"source": {"catalog": {"version": "2.3.x"}}})
    found = await wait_update(
        extensions, name, available="2.3.8", held=("2.3.8", api.REASON_PERMISSION_GROWTH), timeout=300
    )
    assert found["status"]["update"]["held"]["addedPermissions"] == ADDED
    held = conditions.of(found, api.TYPE_UPDATE_HELD)
    assert (held["status"], held["reason"]) == ("True", api.REASON_PERMISSION_GROWTH)
    assert held["message"] == (
        'bundle "infinispan-operator.v2.3.8" (2.3.8) grants 2 permission(s) that '
        f'"infinispan-operator.v2.3.0" does not: {"; ".join(ADDED)}. Set spec.upgrade.approvedVersion '
        "to 2.3.8 to approve them, or spec.upgrade.permissionGrowth to Allow"
    )
    await wait_event(
        extensions.kube, name, type="Normal", reason="UpdateHeld", note_contains="(2.3.8) grants 2"
    )
    assert found["status"]["install"]["bundle"]["version"] == "2.3.0"
    assert await installed_state(extensions, name) == before

    # olmctl tells the same before anything is installed.
    diff = await olmctl(
        "rbac", "infinispan", "--namespace", namespace, "--service-account", account,
        "--version", "2.3.0", "--version", "2.3.8", "--channel", "stable", "--diff",
        "--catalog", community_catalog.name,
        "--registry-ca", str(registry.ca_file), "--cache-dir", str(tmp_path / "cache"),
    )  # fmt: skip
    assert diff.code == EXIT_OK, diff.err
    assert yaml.safe_load(diff.out) == {"from": "2.3.0", "to": "2.3.8", "addedPermissions": ADDED}

    await extensions.patch_spec(name, {"upgrade": {"approvedVersion": "2.3.8"}})
    await wait_installed(extensions, name, "2.3.8", timeout=300)
    await wait_update(extensions, name, available=None, held=None)
