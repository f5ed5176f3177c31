"""Crash safety of revision creation: operator-controller killed between a revision's Secrets and
the revision leaves orphan Secrets; the next process installs the extension and leaves exactly the
Secrets its revision references, each owned by it.

The session's operator-controller is stopped for the crash (two processes would both reconcile)
and restarted afterwards, also when the test fails.
"""

from __future__ import annotations

import functools
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from e2e.operator_controller.conftest import SYSTEM_NAMESPACE, Extensions, ServedCatalog
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.process import testing_seams
from olm_runtime.client import Client, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import OperatorControllerProcess


async def owned(kube: Client, extension: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The extension's ClusterObjectSets and its content Secrets."""
    selector = f"{names.OWNER_NAME_LABEL}={extension}"
    revisions = await kube.list(CLUSTER_OBJECT_SET, label_selector=selector)
    secrets = await kube.list(kinds.SECRET, namespace=SYSTEM_NAMESPACE, label_selector=selector)
    return [dict(r) for r in revisions.items], [dict(s) for s in secrets.items]


async def crash_after_secrets(
    control_plane: ControlPlane, workdir: Path, create: Callable[[], Awaitable[object]]
) -> None:
    """Run an operator-controller that kills itself after a revision's Secrets, `await create()`
    an extension and wait for the crash."""
    crashing = OperatorControllerProcess(control_plane, workdir, env={testing_seams.CRASH_AFTER_SECRETS: "1"})
    crashing.start()
    try:
        await crashing.wait_ready()
        process = crashing.process
        assert process is not None
        await create()

        async def died() -> bool:
            return process.poll() is not None

        await eventually(died, what="operator-controller to crash after the Secrets", timeout=120)
        assert process.returncode == -signal.SIGKILL, crashing.log_tail()
        assert "crashing after the revision's Secrets" in crashing.log_tail(), crashing.log_tail()
    except BaseException:
        print(f"\n--- crashing operator-controller log ({workdir}) ---\n{crashing.log_tail(150)}")
        raise
    finally:
        crashing.kill()


async def test_crash_between_secrets_and_revision_leaves_no_orphans(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
    *,
    operator_controller: OperatorControllerProcess,
    control_plane: ControlPlane,
    tmp_path: Path,
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    name = unique("crash")
    selector = {"matchLabels": fixture_catalog.label}
    try:
        assert operator_controller.stop() == 0, operator_controller.log_tail()
        create = functools.partial(
            extensions.create, name, "test", namespace, account, version="1.0.0", selector=selector
        )
        await crash_after_secrets(control_plane, tmp_path / "crashing", create)
        revisions, orphans = await owned(kube, name)
        assert revisions == []
        assert orphans, "the crash came after the Secrets: some must exist"
        for secret in orphans:
            assert secret["metadata"]["labels"][names.REVISION_NAME_LABEL] == f"{name}-1"
            assert not secret["metadata"].get("ownerReferences"), secret["metadata"]

        operator_controller.start()
        await operator_controller.wait_ready()
        found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
        assert found["status"]["install"]["bundle"] == {"name": "test-operator.1.0.0", "version": "1.0.0"}
        await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded")

        revisions, secrets = await owned(kube, name)
        assert [r["metadata"]["name"] for r in revisions] == [f"{name}-1"]
        revision = revisions[0]
        referenced = {
            entry["ref"]["name"]
            for phase in revision["spec"]["phases"]
            for entry in phase["objects"]
            if "ref" in entry
        }
        assert referenced
        assert sorted(s["metadata"]["name"] for s in secrets) == sorted(referenced)
        for secret in secrets:
            owners = secret["metadata"].get("ownerReferences") or []
            assert [(o["kind"], o["name"], o["uid"]) for o in owners] == [
                (CLUSTER_OBJECT_SET.kind, revision["metadata"]["name"], revision["metadata"]["uid"])
            ], secret["metadata"]
    finally:
        if operator_controller.process is None:
            operator_controller.start()
            await operator_controller.wait_ready()
