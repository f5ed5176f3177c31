"""`spec.upgrade.rollbackTo` against the real control plane: an earlier revision's content comes back
without its catalog, a rollback whose CRDs would drop a stored version is refused with nothing
changed, and a version no revision installed is reported.

The package is the real cat-facts-operator 1.0.0 bundle published as 1.0.0, 1.0.1 and 1.0.2, each
replacing the one before; 1.0.1 and 1.0.2 serve and store a `v1beta1` of the CatFact CRD beside its
`v1alpha1`, so the cluster's CRD records `v1beta1` as stored once 1.0.1 is installed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from e2e.operator_controller.conftest import (
    CustomCatalogs,
    Extensions,
    cat_facts_chain,
    crd_version_annotation,
    list_revisions,
    wait_event,
    wait_installed,
    wait_revisions,
)
from e2e.operator_controller.test_removal import revision_objects
from e2e.operator_controller.test_update_policy import installed_state
from olm.api import conditions as api
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_OBJECT_SET
from olm.cli.commands import EXIT_OK
from olm_runtime import conditions
from olm_runtime.testing.poll import eventually
from olm_testkit.images import realdata
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl
from olm_testkit.plugin import Installer

PACKAGE = "catfacts-rollback"


def _with_v1beta1(version: str) -> Callable[[dict[str, Any]], None]:
    annotate = crd_version_annotation(version)

    def edit(crd: dict[str, Any]) -> None:
        annotate(crd)
        [alpha] = crd["spec"]["versions"]
        beta = copy.deepcopy(alpha)
        alpha["storage"] = False
        beta["name"] = "v1beta1"
        crd["spec"]["versions"] = [alpha, beta]

    return edit


def _crd_edit(version: str) -> Callable[[dict[str, Any]], None]:
    return crd_version_annotation(version) if version == "1.0.0" else _with_v1beta1(version)


def _package(*versions: str) -> realdata.CustomPackage:
    return cat_facts_chain(PACKAGE, *versions, edit_crd=_crd_edit)


async def _archival_done(extensions: Extensions, revision: str) -> None:
    """Until the archived `revision` has released its objects and dropped its teardown finalizer:
    the ClusterObjectSet controller writes it a few times after the archive."""

    async def done() -> bool:
        cos = await extensions.kube.get(CLUSTER_OBJECT_SET, revision)
        progressing = conditions.find((cos.get("status") or {}).get("conditions") or [], api.TYPE_PROGRESSING)
        released = progressing is not None and progressing.get("reason") == api.REASON_ARCHIVED
        return released and names.TEARDOWN_FINALIZER not in (cos["metadata"].get("finalizers") or [])

    await eventually(done, what=f"revision {revision} to finish archiving", timeout=60)


def _by_identity(objects: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in objects}


async def test_rollback_restores_a_revision_and_refuses_to_lose_stored_data(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    custom_catalogs: CustomCatalogs,
    olmctl: Olmctl,
) -> None:
    catalog = await custom_catalogs.polled(_package("1.0.0"), tag="rollback")
    account = await installer(namespace)
    name = unique("rollback")
    await extensions.create(name, PACKAGE, namespace, account, **catalog.fields(namespace))
    await wait_installed(extensions, name, "1.0.0")
    await catalog.publish(_package("1.0.0", "1.0.1"))
    await wait_installed(extensions, name, "1.0.1")
    await wait_revisions(extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Active"})
    await _archival_done(extensions, f"{name}-1")

    # Back to 1.0.0 would drop v1beta1, which the cluster now stores: refused, nothing changes.
    before = await installed_state(extensions, name)
    await extensions.patch_spec(name, {"upgrade": {"rollbackTo": "1.0.0"}})
    await extensions.wait_condition(
        name,
        api.TYPE_PROGRESSING,
        "True",
        reason=api.REASON_RETRYING,
        message_contains="stored versions removed",
    )
    assert await installed_state(extensions, name) == before
    assert [r["metadata"]["name"] for r in await list_revisions(extensions.kube, name)] == [
        f"{name}-1",
        f"{name}-2",
    ]

    # A version no revision installed.
    await extensions.patch_spec(name, {"upgrade": {"rollbackTo": "1.0.9"}})
    found = await extensions.wait_condition(name, api.TYPE_PROGRESSING, "False", reason=api.REASON_BLOCKED)
    assert conditions.of(found, api.TYPE_PROGRESSING)["message"] == (
        "spec.upgrade.rollbackTo 1.0.9: no revision of this extension installed that version "
        "(revisions kept: 1.0.0, 1.0.1); set it to one of those, or remove it"
    )

    # Forward to 1.0.2, then back to 1.0.1 with the catalog gone: revision 2's objects return.
    await extensions.patch_spec(name, {"upgrade": {"rollbackTo": None}})
    await catalog.publish(_package("1.0.0", "1.0.1", "1.0.2"))
    await wait_installed(extensions, name, "1.0.2")
    await extensions.kube.delete(CLUSTER_CATALOG, catalog.served.name)
    # olmctl writes the field; without --to, the version installed before this one.
    rolled = await olmctl("rollback", name)
    assert rolled.code == EXIT_OK, rolled.err
    assert f"clusterextension/{name} rolling back to 1.0.1; waiting for it" in rolled.err
    assert (await extensions.get(name))["spec"]["upgrade"]["rollbackTo"] == "1.0.1"
    await wait_installed(extensions, name, "1.0.1")
    revisions = await wait_revisions(
        extensions,
        name,
        {f"{name}-1": "Archived", f"{name}-2": "Archived", f"{name}-3": "Archived", f"{name}-4": "Active"},
    )
    restored = _by_identity(await revision_objects(extensions.kube, revisions[3]))
    assert restored == _by_identity(await revision_objects(extensions.kube, revisions[1]))
    await wait_event(
        extensions.kube, name, type="Normal", reason="Installing", note_contains="rolling back to bundle"
    )
