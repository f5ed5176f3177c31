"""A catalog image updated under its tag: catalogd's polling picks it up, and an extension without a
version pin upgrades on its own to the new successor."""

from __future__ import annotations

from e2e.operator_controller.conftest import (
    CustomCatalogs,
    Extensions,
    cat_facts_chain,
    wait_event,
    wait_installed,
    wait_revisions,
)
from olm.api.kinds import CLUSTER_CATALOG
from olm_testkit.images import realdata
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

PACKAGE = "catfacts-polled"


def _chain(*versions: str) -> realdata.CustomPackage:
    return cat_facts_chain(PACKAGE, *versions)


async def test_polled_catalog_update_upgrades_an_unpinned_extension(
    namespace: str, installer: Installer, extensions: Extensions, custom_catalogs: CustomCatalogs
) -> None:
    polled = await custom_catalogs.polled(_chain("1.0.0"), tag="polled")
    first = polled.served.published
    catalog = await extensions.kube.get(CLUSTER_CATALOG, polled.served.name)
    assert catalog["status"]["resolvedSource"]["image"]["ref"] == first.digest_ref

    account = await installer(namespace)
    name = unique("polled")
    await extensions.create(name, PACKAGE, namespace, account, **polled.fields(namespace))
    found = await wait_installed(extensions, name, "1.0.0")
    assert found["status"]["install"]["bundle"] == {"name": f"{PACKAGE}.v1.0.0", "version": "1.0.0"}

    # The same tag now holds 2.0.0, which replaces 1.0.0: nothing but polling tells anyone.
    second = await polled.publish(_chain("1.0.0", "2.0.0"))
    assert second.ref == first.ref
    assert second.digest_ref != first.digest_ref
    found = await wait_installed(extensions, name, "2.0.0", timeout=120)
    assert found["status"]["install"]["bundle"] == {"name": f"{PACKAGE}.v2.0.0", "version": "2.0.0"}
    catalog = await extensions.kube.get(CLUSTER_CATALOG, polled.served.name)
    assert catalog["status"]["resolvedSource"]["image"]["ref"] == second.digest_ref
    await wait_revisions(extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Active"})
    await wait_event(
        extensions.kube,
        name,
        type="Normal",
        reason="Upgraded",
        note_contains=f'bundle "{PACKAGE}.v1.0.0" (1.0.0) replaced by "{PACKAGE}.v2.0.0" (2.0.0)',
    )
