"""Removing an extension (`spec.removal.policy`, roadmap F16 and F17), with upstream's real test
bundle (`test` 1.0.0: the cluster-scoped CRD olme2etests.olm.operatorframework.io and the
Deployment test-operator).

- `Retain` (the default): the CRD and its custom resources stay and keep working, with OLM's labels
  and ownerReferences gone; the next installation of the package adopts the same CRD. With
  upstream's webhook-operator, whose CRD converts between two versions of different schemas through
  a webhook the extension serves, the CRD keeps its webhook conversion and the Event says why.
- `Cascade`: the custom resources go first, while the extension's Deployment still runs. A
  controller written with olm_runtime plays the operator and removes their finalizer; while it is
  not running, the removal waits and says which object holds it; removing that finalizer by hand
  (the documented way out) lets it go on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from e2e.operator_controller.conftest import Extensions, ServedCatalog, wait_event
from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION
from olm_runtime import conditions, controller, finalizers
from olm_runtime.client import Client, GroupVersionKind, NoKindMatch, errors, kinds
from olm_runtime.manager import Manager, ManagerOptions
from olm_runtime.testing.poll import eventually
from olm_testkit.certmanager import CertManager
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

CRD = "olme2etests.olm.operatorframework.io"
TEST_KIND = GroupVersionKind("olm.operatorframework.io", "v1", "OLME2ETest")
DEPLOYMENT = "test-operator"
FINALIZER = "e2e.olm.operatorframework.io/cleanup"
OLM_LABELS = (names.OWNER_KIND_LABEL, names.OWNER_NAME_LABEL, names.REVISION_NAME_LABEL)


def custom_resource(name: str, *, finalizer: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if finalizer:
        metadata["finalizers"] = [FINALIZER]
    return {"apiVersion": TEST_KIND.api_version, "kind": TEST_KIND.kind, "metadata": metadata}


async def wait_gone(kube: Client, gvk: GroupVersionKind, name: str, *, namespace: str | None = None) -> None:
    async def gone() -> bool:
        try:
            await kube.get(gvk, name, namespace=namespace)
        except errors.NotFound:
            return True
        return False

    await eventually(gone, what=f"{gvk.kind} {name} to be deleted", timeout=180)


async def removing_message(kube: Client, name: str, contains: str) -> str:
    """Wait until the extension being deleted says `Progressing` True/`Removing` with `contains`."""
    seen: list[str] = []

    async def says() -> bool:
        found = await kube.get(CLUSTER_EXTENSION, name)
        condition = conditions.find(found.get("status", {}).get("conditions") or [], "Progressing") or {}
        seen[:] = [f"{condition.get('reason')}: {condition.get('message')}"]
        return condition.get("reason") == "Removing" and contains in str(condition.get("message"))

    await eventually(says, what=f"Removing condition naming {contains!r} (last: {seen})", timeout=120)
    return seen[0]


@pytest.fixture
async def no_test_crd(kube: Client) -> AsyncIterator[None]:
    """The test starts without the CRD (an earlier test's extension may have kept it) and deletes
    what it leaves behind, so the next test installing `test` finds the cluster as usual."""

    async def delete_crd() -> None:
        with contextlib.suppress(errors.NotFound, NoKindMatch):
            for item in (await kube.list(TEST_KIND)).items:
                if item["metadata"].get("finalizers"):
                    await finalizers.remove_finalizer(kube, TEST_KIND, item, FINALIZER)
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.CUSTOM_RESOURCE_DEFINITION, CRD)
        await wait_gone(kube, kinds.CUSTOM_RESOURCE_DEFINITION, CRD)

    await delete_crd()
    yield
    await delete_crd()


async def test_retain_keeps_the_crd_and_its_custom_resources_working_and_reinstall_adopts_them(
    no_test_crd: None,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    selector = {"matchLabels": fixture_catalog.label}
    first = unique("retain-first")
    await extensions.create(first, "test", namespace, account, version="1.0.0", selector=selector)
    await extensions.wait_condition(first, "Installed", "True", reason="Succeeded", timeout=180)
    await extensions.wait_custom_resources_served(first)
    crd_uid = (await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD))["metadata"]["uid"]
    kept = await kube.create(custom_resource(unique("kept")))

    await kube.delete(CLUSTER_EXTENSION, first)  # no spec.removal: Retain
    await wait_gone(kube, CLUSTER_EXTENSION, first)
    extensions.created.remove(first)

    crd = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD)
    metadata = crd["metadata"]
    assert metadata["uid"] == crd_uid
    assert not metadata.get("deletionTimestamp")
    assert metadata.get("ownerReferences") in (None, [])
    assert not set(OLM_LABELS) & set(metadata.get("labels") or {})
    assert metadata["annotations"][names.RETAINED_PACKAGE_ANNOTATION] == "test"
    # Everything else of the extension is gone.
    await wait_gone(kube, kinds.DEPLOYMENT, DEPLOYMENT, namespace=namespace)
    # The custom resource is untouched and its kind still works: read, update, create.
    assert (await kube.get(TEST_KIND, kept["metadata"]["name"]))["metadata"]["uid"] == kept["metadata"]["uid"]
    await kube.patch(TEST_KIND, kept["metadata"]["name"], {"metadata": {"labels": {"touched": "yes"}}})
    await kube.create(custom_resource(unique("after")))
    await wait_event(
        kube,
        first,
        type="Normal",
        reason="KeptCRD",
        note_contains=f"kept CRD {CRD}",
        reporter="clusterobjectset-controller",  # the revision's teardown kept it
    )
    await wait_event(
        kube, first, type="Normal", reason="Removed", note_contains="CRDs and their custom resources kept"
    )

    # Installing the package again adopts the kept CRD (collision protection would refuse any other
    # unowned one) and takes the mark off.
    second = unique("retain-second")
    await extensions.create(second, "test", namespace, account, version="1.0.0", selector=selector)
    await extensions.wait_condition(second, "Installed", "True", reason="Succeeded", timeout=180)
    adopted = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD)
    assert adopted["metadata"]["uid"] == crd_uid
    assert [r["name"] for r in adopted["metadata"]["ownerReferences"]] == [f"{second}-1"]
    assert names.RETAINED_PACKAGE_ANNOTATION not in (adopted["metadata"].get("annotations") or {})
    assert adopted["metadata"]["labels"][names.OWNER_NAME_LABEL] == second
    assert (await kube.get(TEST_KIND, kept["metadata"]["name"]))["metadata"]["uid"] == kept["metadata"]["uid"]


class PlayedOperator:
    """The extension's operator, played by an olm_runtime controller: when a custom resource is being
    deleted it records whether the operator's Deployment still exists, then removes its finalizer."""

    def __init__(self, kube: Client, namespace: str) -> None:
        self.kube = kube
        self.namespace = namespace
        self.finalized: dict[str, bool] = {}
        """Custom resource name -> whether the Deployment existed when its finalizer was removed."""

    async def reconcile(self, request: controller.Request) -> controller.Result:
        try:
            found = await self.kube.get(TEST_KIND, request.name)
        except errors.NotFound:
            return controller.Result()
        if not finalizers.is_being_deleted(found) or not finalizers.has_finalizer(found, FINALIZER):
            return controller.Result()
        try:
            await self.kube.get(kinds.DEPLOYMENT, DEPLOYMENT, namespace=self.namespace)
            running = True
        except errors.NotFound:
            running = False
        await finalizers.remove_finalizer(self.kube, TEST_KIND, found, FINALIZER)
        self.finalized[request.name] = running
        return controller.Result()


async def test_cascade_deletes_custom_resources_first_and_says_which_finalizer_holds_it(
    *,
    no_test_crd: None,
    kube: Client,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
) -> None:
    account = await installer(namespace)
    name = unique("cascade")
    obj = await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    assert "removal" not in obj["spec"]
    await kube.patch(CLUSTER_EXTENSION, name, {"spec": {"removal": {"policy": "Cascade"}}})
    await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
    await extensions.wait_custom_resources_served(name)
    orphaned = (await kube.create(custom_resource(unique("no-operator"), finalizer=True)))["metadata"]["name"]
    handled = (await kube.create(custom_resource(unique("operator"), finalizer=True)))["metadata"]["name"]

    # The operator is not running yet: the removal waits on both finalizers and names them.
    await kube.delete(CLUSTER_EXTENSION, name)
    message = await removing_message(kube, name, f"OLME2ETest {orphaned} waits for finalizers")
    assert "removal policy Cascade" in message
    assert f"OLME2ETest {handled} waits for finalizers" in message
    assert "kubectl patch" in message  # the way out
    await kube.get(kinds.DEPLOYMENT, DEPLOYMENT, namespace=namespace)  # nothing else was deleted yet
    await wait_event(kube, name, type="Normal", reason="Removing", note_contains="waits for finalizers")

    # The documented way out for an object whose controller is gone: remove its finalizer by hand.
    await kube.patch(TEST_KIND, orphaned, {"metadata": {"finalizers": None}})
    await wait_gone(kube, TEST_KIND, orphaned)
    await removing_message(kube, name, f"OLME2ETest {handled} waits for finalizers")

    # The operator comes back and finalizes the other one while its Deployment still runs.
    operator = PlayedOperator(kube, namespace)
    manager = Manager(kube, options=ManagerOptions(metrics_bind_address="0"))
    await (
        controller.Builder(manager)
        .for_(TEST_KIND)
        .named(unique("played-operator"))
        .complete(controller.ReconcilerFunc(operator.reconcile))
    )
    task = asyncio.create_task(manager.run())
    try:
        await wait_gone(kube, CLUSTER_EXTENSION, name)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    extensions.created.remove(name)
    assert operator.finalized == {handled: True}
    with pytest.raises(errors.NotFound):
        await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD)
    with pytest.raises(errors.NotFound):
        await kube.get(kinds.DEPLOYMENT, DEPLOYMENT, namespace=namespace)
    await wait_event(
        kube, name, type="Normal", reason="Removed", note_contains="CRDs deleted (removal policy Cascade)"
    )


WEBHOOK_CRD = "webhooktests.webhook.operators.coreos.io"


async def test_retain_keeps_a_conversion_webhook_it_cannot_replace_and_says_why(
    *,
    kube: Client,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
    cert_manager: CertManager,
) -> None:
    account = await installer(namespace)
    name = unique("retain-webhook")
    await extensions.create(
        name,
        "webhook-operator",
        namespace,
        account,
        version="0.0.1",
        selector={"matchLabels": fixture_catalog.label},
    )
    try:
        await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=240)
        before = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, WEBHOOK_CRD)
        assert before["spec"]["conversion"]["strategy"] == "Webhook"
        await extensions.wait_custom_resources_served(name)
        await kube.delete(CLUSTER_EXTENSION, name)
        await wait_gone(kube, CLUSTER_EXTENSION, name)
        extensions.created.remove(name)

        kept = await kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, WEBHOOK_CRD)
        assert kept["metadata"]["uid"] == before["metadata"]["uid"]
        assert kept["spec"]["conversion"] == before["spec"]["conversion"]  # kept as it was
        event = await wait_event(
            kube,
            name,
            type="Normal",
            reason="KeptCRD",
            note_contains=f"kept CRD {WEBHOOK_CRD}",
            reporter="clusterobjectset-controller",
        )
        assert "keeps its conversion webhook" in event["note"]
        assert "its versions v1, v2 have different schemas" in event["note"]
        # Its admission webhooks went with the extension: nothing points at the deleted Service.
        for gvk in (kinds.VALIDATING_WEBHOOK_CONFIGURATION, kinds.MUTATING_WEBHOOK_CONFIGURATION):
            for item in (await kube.list(gvk)).items:
                for webhook in item.get("webhooks") or []:
                    service = webhook["clientConfig"].get("service") or {}
                    assert service.get("namespace") != namespace, item["metadata"]["name"]
    finally:
        with contextlib.suppress(errors.NotFound):
            await kube.delete(kinds.CUSTOM_RESOURCE_DEFINITION, WEBHOOK_CRD)
