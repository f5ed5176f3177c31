"""Cluster constraints (roadmap F19) against the real control plane: a bundle whose catalog entry
says it needs a newer Kubernetes than the API server reports is never installed, and an installed
bundle the catalog later says this cluster is out of range for is reported, not removed.

The package is the real cat-facts-operator 1.0.0 bundle published as successive versions, with
the constraints in their catalog entries as `opm render` writes them (`olm.csv.metadata`'s
`minKubeVersion`) or as a range (`olm.kubeVersion`). The versions named are computed from the
API server's own `/version`, so the test does not depend on the control plane's release.
"""

from __future__ import annotations

from e2e.operator_controller.conftest import (
    CustomCatalogs,
    Extensions,
    cat_facts_chain,
    wait_event,
    wait_installed,
)
from e2e.operator_controller.test_update_policy import installed_state, wait_update
from olm.api import conditions as api
from olm.pipeline import plan, resolve
from olm_runtime import conditions
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

PACKAGE = "catfacts-kube"


async def test_the_cluster_version_decides_what_installs_and_what_waits(
    namespace: str, installer: Installer, extensions: Extensions, custom_catalogs: CustomCatalogs
) -> None:
    cluster = await plan.kubernetes_version(extensions.kube)
    assert cluster is not None
    newer = f"{cluster.major}.{cluster.minor + 1}.0"
    needs_newer = {"type": "olm.csv.metadata", "value": {"minKubeVersion": newer, "displayName": "Cat facts"}}
    catalog = await custom_catalogs.polled(
        cat_facts_chain(PACKAGE, "1.0.0", "1.0.1", properties={"1.0.1": (needs_newer,)}), tag="kube"
    )
    account = await installer(namespace)
    common = catalog.fields(namespace)
    why = f"{PACKAGE} 1.0.1 needs Kubernetes >= {newer}; this cluster is {cluster}"

    # Pinned to what the cluster cannot run: refused, saying why and what to do; nothing installed.
    pinned = unique("kube-pinned")
    await extensions.create(pinned, PACKAGE, namespace, account, version="1.0.1", **common)
    message = f'no bundles found for package "{PACKAGE}" matching version "1.0.1"'
    found = await extensions.wait_condition(
        pinned, api.TYPE_PROGRESSING, "True", reason=api.REASON_RETRYING, message_contains=message
    )
    assert conditions.of(found, api.TYPE_PROGRESSING)["message"] == message
    event = await wait_event(extensions.kube, pinned, type="Warning", reason="Failed", note_contains=why)
    assert str(event["note"]).startswith(f"{message}; catalogs: ")
    assert str(event["note"]).endswith(f"; {resolve.Advice.CLUSTER}")
    assert conditions.of(found, api.TYPE_INSTALLED)["status"] == "False"
    await extensions.delete_and_wait_gone(pinned)

    # Unpinned: the newest bundle the cluster runs installs; the newer one is found and held.
    name = unique("kube")
    await extensions.create(name, PACKAGE, namespace, account, **common)
    await wait_installed(extensions, name, "1.0.0")
    found = await wait_update(extensions, name, available="1.0.1", held=("1.0.1", api.REASON_CLUSTER_VERSION))
    assert conditions.of(found, api.TYPE_UPDATE_HELD)["message"] == why
    await wait_event(extensions.kube, name, type="Normal", reason="UpdateHeld", note_contains=why)

    # The catalog now says 1.0.0 runs only below this cluster's version, as a cluster upgraded out
    # of its range would: reported, and nothing of the installed revision moves.
    before = await installed_state(extensions, name)
    only_older = {"type": "olm.kubeVersion", "value": f"<{cluster}"}
    await catalog.publish(cat_facts_chain(PACKAGE, "1.0.0", properties={"1.0.0": (only_older,)}))
    stays = (
        f'installed bundle {PACKAGE} 1.0.0 needs Kubernetes "<{cluster}"; this cluster is {cluster}; '
        "it stays installed, nothing is removed"
    )
    found = await extensions.wait_condition(
        name, api.TYPE_UPDATE_HELD, "True", reason=api.REASON_CLUSTER_VERSION, message_contains=stays
    )
    assert conditions.of(found, api.TYPE_INSTALLED)["status"] == "True"
    assert found["status"]["install"]["bundle"]["version"] == "1.0.0"
    await wait_event(
        extensions.kube, name, type="Normal", reason="UpdateHeld", note_contains="it stays installed"
    )
    assert await installed_state(extensions, name) == before
