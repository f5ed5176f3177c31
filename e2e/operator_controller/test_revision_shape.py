"""A revision's own metadata as upstream writes it: the bundle's properties in `olm.properties`, the
package name and bundle version as labels that `kubectl get -l` selects, and its content Secrets
owned by it as their controller; a revision made before these existed (by an older OLM) gets them
in place, without a new revision.

The bundle is the real cat-facts-operator 1.0.0 with a `metadata/properties.yaml` of its own.
"""

from __future__ import annotations

import json
from typing import Any

from e2e.operator_controller.conftest import (
    SYSTEM_NAMESPACE,
    CustomCatalogs,
    Extensions,
    cat_facts_chain,
    list_revisions,
    wait_installed,
)
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime.client import Client, kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import OperatorControllerProcess

PACKAGE = "catfacts-shape"


async def content_secrets(kube: Client, extension: str) -> list[dict[str, Any]]:
    selector = f"{names.OWNER_NAME_LABEL}={extension}"
    listed = await kube.list(kinds.SECRET, namespace=SYSTEM_NAMESPACE, label_selector=selector)
    return sorted((dict(s) for s in listed.items), key=lambda s: s["metadata"]["name"])


def secret_owners(secret: dict[str, Any]) -> list[tuple[str, bool]]:
    return [
        (ref["uid"], ref.get("controller") is True) for ref in secret["metadata"].get("ownerReferences") or []
    ]


PROPERTIES = ({"type": "olm.maxOpenShiftVersion", "value": "4.18"},)


async def test_a_revision_carries_the_bundle_properties_and_selectable_labels(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    *,
    custom_catalogs: CustomCatalogs,
    operator_controller: OperatorControllerProcess,
) -> None:
    package = cat_facts_chain(PACKAGE, "1.0.0", bundle_properties={"1.0.0": PROPERTIES})
    published = await custom_catalogs.publish((package,), repository=custom_catalogs.repository())
    catalog = await custom_catalogs.serve(published)
    account = await installer(namespace)
    name = unique("shape")
    await extensions.create(
        name,
        PACKAGE,
        namespace,
        account,
        selector={"matchLabels": catalog.label},
        config={"watchNamespace": namespace},
    )
    await wait_installed(extensions, name, "1.0.0")
    (revision,) = await list_revisions(extensions.kube, name)
    assert json.loads(revision["metadata"]["annotations"][names.PROPERTIES_ANNOTATION]) == list(PROPERTIES)
    selector = f"{names.PACKAGE_NAME_LABEL}={PACKAGE},{names.BUNDLE_VERSION_LABEL}=1.0.0"
    selected = (await extensions.kube.list(CLUSTER_OBJECT_SET, label_selector=selector)).items
    assert [r["metadata"]["name"] for r in selected] == [revision["metadata"]["name"]]

    secrets = await content_secrets(extensions.kube, name)
    assert secrets
    for secret in secrets:
        assert secret_owners(secret) == [(revision["metadata"]["uid"], True)], secret["metadata"]["name"]

    # As an older OLM left it: neither the labels nor the annotation, and Secrets owned by their
    # revision as a plain owner. A restarted operator-controller (an upgrade of OLM) puts them back
    # on the same revision.
    stripped = {
        "metadata": {
            "labels": {names.PACKAGE_NAME_LABEL: None, names.BUNDLE_VERSION_LABEL: None},
            "annotations": {names.PROPERTIES_ANNOTATION: None},
        }
    }
    assert operator_controller.stop() == 0, operator_controller.log_tail()
    try:
        await extensions.kube.patch(CLUSTER_OBJECT_SET, revision["metadata"]["name"], stripped)
        for secret in secrets:
            references = [{**ref, "controller": False} for ref in secret["metadata"]["ownerReferences"]]
            await extensions.kube.patch(
                kinds.SECRET,
                secret["metadata"]["name"],
                {"metadata": {"ownerReferences": references}},
                namespace=SYSTEM_NAMESPACE,
            )
    finally:
        operator_controller.start()
        await operator_controller.wait_ready()

    async def restored() -> bool:
        revisions = await list_revisions(extensions.kube, name)
        metadata = revisions[-1]["metadata"]
        owners = [secret_owners(s) for s in await content_secrets(extensions.kube, name)]
        return (
            len(revisions) == 1
            and metadata.get("labels", {}).get(names.BUNDLE_VERSION_LABEL) == "1.0.0"
            and names.PROPERTIES_ANNOTATION in metadata.get("annotations", {})
            and owners == [[(revision["metadata"]["uid"], True)]] * len(secrets)
        )

    await eventually(
        restored,
        what="the revision's labels, olm.properties and its Secrets' controller references restored in place",
        timeout=60,
    )
