"""Revisions across upgrades: the retention of archived revisions (and their Secrets), and an
upgrade whose rendered content is identical to what is installed."""

from __future__ import annotations

from typing import Any

from e2e.operator_controller.conftest import (
    CustomCatalogs,
    Extensions,
    ServedCatalog,
    cat_facts_chain,
    list_revisions,
    wait_event,
    wait_installed,
    wait_revisions,
)
from olm.api import names
from olm_runtime.client import kinds
from olm_runtime.testing.poll import eventually
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

RETENTION_LIMIT = 5
"""operator-controller's default number of archived revisions kept per extension."""


async def test_seven_upgrades_keep_five_archived_revisions(
    namespace: str, installer: Installer, extensions: Extensions, custom_catalogs: CustomCatalogs
) -> None:
    # Eight versions of the real cat-facts-operator 1.0.0 bundle, each replacing the one before.
    # A new version alone need not change the rendered content, and no change means no revision:
    # each version's CRD carries its version in an annotation.
    versions = [f"1.0.{patch}" for patch in range(8)]
    package = cat_facts_chain("catfacts-chain", *versions)
    published = await custom_catalogs.publish((package,), repository=custom_catalogs.repository())
    served = await custom_catalogs.serve(published)

    account = await installer(namespace)
    name = unique("chain")
    await extensions.create(
        name,
        package.name,
        namespace,
        account,
        version=versions[0],
        selector={"matchLabels": served.label},
        config={"watchNamespace": namespace},
    )
    await wait_installed(extensions, name, versions[0])
    first_secrets = await _revision_secrets(extensions, name, f"{name}-1")
    assert first_secrets, "revision 1 keeps its objects in Secrets"

    for number, version in enumerate(versions[1:], start=2):
        await extensions.patch_spec(name, {"source": {"catalog": {"version": version}}})
        found = await wait_installed(extensions, name, version)
        assert found["status"]["install"]["bundle"] == {
            "name": package.bundle_name(version),
            "version": version,
        }
        # Each upgrade is its own revision, and the one before is archived once it has rolled out.
        await wait_revisions(
            extensions,
            name,
            {
                **{f"{name}-{n}": "Archived" for n in range(max(1, number - RETENTION_LIMIT), number)},
                f"{name}-{number}": "Active",
            },
        )

    revisions = await wait_revisions(
        extensions,
        name,
        {**{f"{name}-{n}": "Archived" for n in range(3, 8)}, f"{name}-8": "Active"},
    )
    assert [r["metadata"]["annotations"][names.BUNDLE_VERSION_LABEL] for r in revisions] == versions[2:]
    # The Secrets of the deleted revisions go with them (the garbage collector follows their
    # ownerReferences); the kept revisions keep theirs.
    left: list[dict[str, Any]] = []

    async def secrets_gone() -> bool:
        nonlocal left
        left = [
            s for gone in (f"{name}-1", f"{name}-2") for s in await _revision_secrets(extensions, name, gone)
        ]
        return not left

    try:
        await eventually(secrets_gone, what=f"the Secrets of {name}-1 and {name}-2 to be deleted", timeout=60)
    except AssertionError as error:
        details = [(s["metadata"]["name"], s["metadata"].get("ownerReferences")) for s in left]
        raise AssertionError(f"{error}: {details}") from None
    assert await _revision_secrets(extensions, name, f"{name}-8")
    await wait_event(
        extensions.kube,
        name,
        type="Normal",
        reason="Upgraded",
        note_contains=f'replaced by "{package.bundle_name(versions[-1])}"',
    )


async def _revision_secrets(extensions: Extensions, extension: str, revision: str) -> list[dict[str, Any]]:
    selector = f"{names.OWNER_NAME_LABEL}={extension},{names.REVISION_NAME_LABEL}={revision}"
    listed = await extensions.kube.list(
        kinds.SECRET, namespace=names.DEFAULT_SYSTEM_NAMESPACE, label_selector=selector
    )
    return sorted((dict(s) for s in listed.items), key=lambda s: str(s["metadata"]["name"]))


async def test_identical_content_upgrade_moves_the_installed_bundle_without_a_revision(
    namespace: str, installer: Installer, extensions: Extensions, fixture_catalog: ServedCatalog
) -> None:
    # test-operator 1.0.0 and 1.0.4 share one image: the same rendered content. 1.0.4 is no
    # successor of 1.0.0 in the fixture catalog, hence SelfCertified.
    account = await installer(namespace)
    name = unique("test")
    await extensions.create(
        name, "test", namespace, account, version="1.0.0", selector={"matchLabels": fixture_catalog.label}
    )
    await wait_installed(extensions, name, "1.0.0")
    before = await list_revisions(extensions.kube, name)
    assert [r["metadata"]["name"] for r in before] == [f"{name}-1"]

    await extensions.patch_spec(
        name, {"source": {"catalog": {"version": "1.0.4", "upgradeConstraintPolicy": "SelfCertified"}}}
    )
    found = await wait_installed(extensions, name, "1.0.4")
    assert found["status"]["install"]["bundle"] == {"name": "test-operator.1.0.4", "version": "1.0.4"}

    # No new revision: the active one is relabelled with the new bundle, its content unchanged.
    after = await wait_revisions(extensions, name, {f"{name}-1": "Active"})
    annotations = after[0]["metadata"]["annotations"]
    assert annotations[names.BUNDLE_NAME_LABEL] == "test-operator.1.0.4"
    assert annotations[names.BUNDLE_VERSION_LABEL] == "1.0.4"
    assert (
        annotations[names.CONTENT_DIGEST_ANNOTATION]
        == (before[0]["metadata"]["annotations"][names.CONTENT_DIGEST_ANNOTATION])
    )
    assert after[0]["spec"]["phases"] == before[0]["spec"]["phases"]
    assert after[0]["metadata"]["uid"] == before[0]["metadata"]["uid"]
    await wait_event(
        extensions.kube,
        name,
        type="Normal",
        reason="Upgraded",
        note_contains='bundle "test-operator.1.0.0" (1.0.0) replaced by "test-operator.1.0.4" (1.0.4)',
    )
