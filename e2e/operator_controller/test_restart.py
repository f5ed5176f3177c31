"""A restarted operator-controller reuses what an earlier process rendered: a steady extension is
reconciled without its bundle being pulled or rendered again, even from an empty cache (a new Pod's
emptyDir), because its revision records what its content was rendered from (`render-key`). A
revision without that record (written by an older OLM) takes the full path once and gains it.

The session's operator-controller is stopped for the restarts and running again afterwards, also
when the test fails.
"""

from __future__ import annotations

import shutil
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from e2e.operator_controller.conftest import CustomCatalogs, Extensions, cat_facts_chain, wait_installed
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.testing.poll import eventually
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import OperatorControllerProcess


async def reconciled_by_this_process(operator_controller: OperatorControllerProcess, extension: str) -> bool:
    """Whether the running process has finished a reconcile of `extension`: each one ends by setting
    the extension's revision gauge, which a new process starts without."""
    text = await operator_controller.scrape()
    for family in text_string_to_metric_families(text):
        if family.name == "olm_clusterextension_revisions":
            return any(s.labels == {"name": extension, "state": "active"} for s in family.samples)
    return False


async def start_from_empty_cache(operator_controller: OperatorControllerProcess, extension: str) -> None:
    shutil.rmtree(operator_controller.cache_dir, ignore_errors=True)
    operator_controller.start()
    await operator_controller.wait_ready()
    await eventually(
        lambda: reconciled_by_this_process(operator_controller, extension),
        what=f"the restarted operator-controller to reconcile {extension}",
        timeout=120,
    )


async def test_a_restart_reuses_the_revision_without_the_bundle(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    custom_catalogs: CustomCatalogs,
    *,
    operator_controller: OperatorControllerProcess,
) -> None:
    kube = extensions.kube
    account = await installer(namespace)
    # A bundle of its own (the package name is in its content): no other extension's reconcile
    # unpacks or parses the same image, so whether this one did is told by its unpack directory.
    package = unique("restarted")
    published = await custom_catalogs.publish(
        (cat_facts_chain(package, "1.0.0"),), repository=custom_catalogs.repository()
    )
    served = await custom_catalogs.serve(published)
    name = unique("restart")
    unpacked = operator_controller.cache_dir / "unpack" / name
    await extensions.create(
        name,
        package,
        namespace,
        account,
        version="1.0.0",
        selector={"matchLabels": served.label},
        config={"watchNamespace": namespace},
    )
    await wait_installed(extensions, name, "1.0.0")
    assert unpacked.is_dir(), "the install unpacked the bundle"
    revision = dict(await kube.get(CLUSTER_OBJECT_SET, f"{name}-1"))
    recorded = revision["metadata"]["annotations"].get(names.RENDER_KEY_ANNOTATION, "")
    assert recorded.startswith("sha256:"), revision["metadata"]["annotations"]

    def unchanged(current: dict[str, Any]) -> None:
        for part in ("annotations", "labels"):
            assert current["metadata"][part] == revision["metadata"][part]

    try:
        assert operator_controller.stop() == 0, operator_controller.log_tail()
        await start_from_empty_cache(operator_controller, name)
        assert not unpacked.exists(), "a steady extension's bundle was pulled and unpacked again"
        unchanged(dict(await kube.get(CLUSTER_OBJECT_SET, f"{name}-1")))
        listed = await kube.list(CLUSTER_OBJECT_SET, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
        assert [r["metadata"]["name"] for r in listed.items] == [f"{name}-1"]
        found = await wait_installed(extensions, name, "1.0.0")
        assert found["status"]["install"]["bundle"] == {"name": f"{package}.v1.0.0", "version": "1.0.0"}

        # As an older OLM left it: no record of the render. The next process renders it once, finds
        # the same content (no new revision) and records the key.
        assert operator_controller.stop() == 0, operator_controller.log_tail()
        forgotten = {"metadata": {"annotations": {names.RENDER_KEY_ANNOTATION: None}}}
        await kube.patch(CLUSTER_OBJECT_SET, f"{name}-1", forgotten)
        await start_from_empty_cache(operator_controller, name)
        assert unpacked.is_dir(), "without the record the bundle must be rendered again"
        again = await kube.get(CLUSTER_OBJECT_SET, f"{name}-1")
        assert again["metadata"]["annotations"].get(names.RENDER_KEY_ANNOTATION) == recorded
        listed = await kube.list(CLUSTER_OBJECT_SET, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
        assert [r["metadata"]["name"] for r in listed.items] == [f"{name}-1"]
    finally:
        if operator_controller.process is None:
            operator_controller.start()
            await operator_controller.wait_ready()
