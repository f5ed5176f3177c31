"""Installing a bundle image without a catalog (`spec.source.bundle`, roadmap F7 and F18), with
upstream's real test bundles pushed to the session's registry under a tag:

- the tag installs (package, bundle and version read from the image), the status says no
  upgrade graph applies, and the revision records the tag and the digest it stood for;
- new content pushed to the tag is found on the next poll and installed as an update;
- a tag deleted from the registry is reported, and the installed revision stays;
- switching the same extension to a catalog source for the same version reinstalls nothing;
- an image that is not a registry+v1 bundle (a catalog image) is refused, and nothing is created;
- `olmctl install --bundle-image` previews and installs one.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from e2e.operator_controller.conftest import Extensions, ServedCatalog, list_revisions
from olm.api import names
from olm.api.kinds import CLUSTER_EXTENSION
from olm.cli.main import EXIT_FAILED, EXIT_OK
from olm_runtime import conditions
from olm_runtime.client import Client, errors, kinds
from olm_runtime.testing.registry import Registry
from olm_testkit.extensions import extension_object
from olm_testkit.images import layout
from olm_testkit.images.realdata import FIXTURE_BUNDLES, realdata
from olm_testkit.images.registry import Reference, RegistryClient
from olm_testkit.names import unique
from olm_testkit.olmctl import Olmctl
from olm_testkit.plugin import Installer

DEPLOYMENT = "test-operator"


def bundle_image(version: str) -> layout.Image:
    return layout.bundle_image(realdata() / FIXTURE_BUNDLES / "test-operator" / f"v{version}")


async def push_tagged(
    pusher: RegistryClient, registry: Registry, repository: str, image: layout.Image, tag: str
) -> str:
    """Push `image` to `repository` under `tag`; the tag reference."""
    await asyncio.to_thread(pusher.push, image, Reference(host=registry.host, repository=repository, tag=tag))
    return f"{registry.host}/{repository}:{tag}"


def image_source(ref: str, poll_minutes: int | None = None) -> dict[str, Any]:
    bundle: dict[str, Any] = {"ref": ref}
    if poll_minutes is not None:
        bundle["pollIntervalMinutes"] = poll_minutes
    return {"sourceType": "Bundle", "bundle": bundle}


async def create_from_image(
    extensions: Extensions, name: str, namespace: str, account: str, source: dict[str, Any]
) -> None:
    obj = extension_object(name, "unused", namespace, account)
    obj["spec"]["source"] = source
    await extensions.kube.create(obj)
    extensions.created.append(name)


async def installed_bundle(kube: Client, name: str) -> dict[str, Any] | None:
    found = await kube.get(CLUSTER_EXTENSION, name)
    return ((found.get("status") or {}).get("install") or {}).get("bundle")


async def test_a_bundle_image_installs_follows_its_tag_and_moves_to_a_catalog_without_reinstalling(
    *,
    kube: Client,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
    registry: Registry,
    pusher: RegistryClient,
) -> None:
    account = await installer(namespace)
    repository = f"{unique('bundle-image')}/test-operator"
    first, second = bundle_image("1.0.0"), bundle_image("1.0.2")
    ref = await push_tagged(pusher, registry, repository, first, "stable")
    name = unique("from-image")
    await create_from_image(extensions, name, namespace, account, image_source(ref, poll_minutes=1))

    found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
    assert found["status"]["install"]["bundle"] == {"name": "testoperator.v1.0.0", "version": "1.0.0"}
    update = conditions.of(found, "UpdateAvailable")
    assert (update["status"], update["reason"]) == ("False", "UpToDate")
    assert "no catalog and no upgrade graph apply" in update["message"]
    assert "checked for new content every 1 minute(s)" in update["message"]
    (revision,) = await list_revisions(kube, name)
    annotations = revision["metadata"]["annotations"]
    assert annotations[names.BUNDLE_SOURCE_ANNOTATION] == ref
    assert annotations[names.BUNDLE_REFERENCE_ANNOTATION] == f"{registry.host}/{repository}@{first.digest}"
    assert revision["metadata"]["labels"][names.PACKAGE_NAME_LABEL] == "test"

    # New content under the tag is an update, found on the next poll.
    await push_tagged(pusher, registry, repository, second, "stable")

    def updated(found: dict[str, Any]) -> bool:
        bundle = ((found.get("status") or {}).get("install") or {}).get("bundle")
        return bundle == {"name": "testoperator.v1.0.2", "version": "1.0.2"}

    await extensions.wait_for(name, "the tag's new content installed", updated, timeout=120)
    revisions = await list_revisions(kube, name)
    assert [r["metadata"]["name"] for r in revisions] == [f"{name}-1", f"{name}-2"]
    deployment_uid = (await kube.get(kinds.DEPLOYMENT, DEPLOYMENT, namespace=namespace))["metadata"]["uid"]

    # The tag is deleted: reported, and what is installed stays.
    await asyncio.to_thread(pusher.delete_manifest, repository, second.digest)
    await extensions.wait_condition(
        name, "Progressing", "True", reason="Retrying", message_contains=f"pulling bundle image {ref}"
    )
    assert await installed_bundle(kube, name) == {"name": "testoperator.v1.0.2", "version": "1.0.2"}
    assert len(await list_revisions(kube, name)) == 2

    # The same extension moves to a catalog offering the same bundle: the content is the same, so
    # nothing is rolled out again.
    catalog_source = {
        "sourceType": "Catalog",
        "catalog": {
            "packageName": "test",
            "version": "1.0.2",
            "selector": {"matchLabels": fixture_catalog.label},
        },
    }
    await kube.patch(CLUSTER_EXTENSION, name, {"spec": {"source": {**catalog_source, "bundle": None}}})
    moved = await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded", timeout=120)
    assert moved["status"]["install"]["bundle"] == {"name": "test-operator.1.0.2", "version": "1.0.2"}
    revisions = await list_revisions(kube, name)
    assert [r["metadata"]["name"] for r in revisions] == [f"{name}-1", f"{name}-2"]
    assert names.BUNDLE_SOURCE_ANNOTATION not in revisions[-1]["metadata"]["annotations"]
    assert (await kube.get(kinds.DEPLOYMENT, DEPLOYMENT, namespace=namespace))["metadata"][
        "uid"
    ] == deployment_uid


async def test_an_image_that_is_not_a_bundle_is_refused_and_nothing_is_created(
    *,
    kube: Client,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    fixture_catalog: ServedCatalog,
) -> None:
    account = await installer(namespace)
    name = unique("not-a-bundle")
    catalog_image = fixture_catalog.published.digest_ref  # a catalog, not a registry+v1 bundle
    await create_from_image(extensions, name, namespace, account, image_source(catalog_image))
    found = await extensions.wait_condition(
        name, "Progressing", "False", reason="Blocked", message_contains="is not a registry+v1 bundle"
    )
    assert catalog_image in conditions.of(found, "Progressing")["message"]
    assert await list_revisions(kube, name) == []


async def test_olmctl_installs_a_bundle_image(
    *,
    kube: Client,
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    registry: Registry,
    pusher: RegistryClient,
    olmctl: Olmctl,
    pull: tuple[str, ...],
) -> None:
    account = await installer(namespace)
    repository = f"{unique('olmctl-bundle')}/test-operator"
    ref = await push_tagged(pusher, registry, repository, bundle_image("1.0.0"), "v1")
    name = unique("olmctl-image")
    common = ("install", "--bundle-image", ref, "-n", namespace, "--service-account", account, "--name", name)

    preview = await olmctl(*common, "--dry-run", *pull)
    assert preview.code == EXIT_OK, preview.err
    shown = [" ".join(line.split()) for line in preview.out.splitlines()]
    assert "Bundle: testoperator.v1.0.0" in shown
    assert "Package: test" in shown
    with pytest.raises(errors.NotFound):
        await kube.get(CLUSTER_EXTENSION, name)

    refused = await olmctl(*common, "--version", "1.0.0", *pull)
    assert refused.code == EXIT_FAILED
    assert "a bundle image is installed as it is" in refused.err

    installed = await olmctl(*common, *pull)
    extensions.created.append(name)
    assert installed.code == EXIT_OK, installed.err
    found = await kube.get(CLUSTER_EXTENSION, name)
    assert found["spec"]["source"] == {"sourceType": "Bundle", "bundle": {"ref": ref}}
    assert found["status"]["install"]["bundle"] == {"name": "testoperator.v1.0.0", "version": "1.0.0"}
