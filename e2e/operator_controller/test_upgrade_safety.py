"""CRD upgrade safety across an upgrade: an unsafe change of a CRD blocks the upgrade under
`Strict` (the default) and leaves the installed version alone; `enforcement: None` lets it through.

The catalogs hold the real cat-facts-operator 1.0.0 bundle as v1 and a copy of it as v2 whose CRD
`catfacts.ryanmillerc.github.io` is changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from e2e.operator_controller.conftest import (
    CustomCatalogs,
    Extensions,
    ServedCatalog,
    wait_installed,
    wait_revisions,
)
from olm_runtime.client import kinds
from olm_testkit.images import realdata
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

CRD_NAME = "catfacts.ryanmillerc.github.io"
PACKAGE = "catfacts-safety"


def _fact_becomes_an_integer(crd: dict[str, Any]) -> None:
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["fact"]["type"] = "integer"


def _stored_version_renamed(crd: dict[str, Any]) -> None:
    crd["spec"]["versions"][0]["name"] = "v1alpha2"


async def _install_v1_with_unsafe_v2(
    extensions: Extensions,
    custom_catalogs: CustomCatalogs,
    namespace: str,
    account: str,
    edit_crd: Callable[[dict[str, Any]], None],
) -> tuple[str, ServedCatalog]:
    source = realdata.real_bundle("cat-facts-operator", "1.0.0")
    package = realdata.CustomPackage(
        name=PACKAGE,
        bundles=(
            realdata.CustomBundle(version="1.0.0", source=source),
            realdata.CustomBundle(
                version="2.0.0", source=source, replaces=f"{PACKAGE}.v1.0.0", edit_crd=edit_crd
            ),
        ),
    )
    published = await custom_catalogs.publish((package,), repository=custom_catalogs.repository())
    served = await custom_catalogs.serve(published)
    name = unique("safety")
    await extensions.create(
        name,
        PACKAGE,
        namespace,
        account,
        version="1.0.0",
        selector={"matchLabels": served.label},
        config={"watchNamespace": namespace},
    )
    await wait_installed(extensions, name, "1.0.0")
    return name, served


async def _blocked(extensions: Extensions, name: str, detail: str) -> None:
    await extensions.patch_spec(name, {"source": {"catalog": {"version": "2.0.0"}}})
    found = await extensions.wait_condition(
        name,
        "Progressing",
        "True",
        reason="Retrying",
        message_contains=f'error for resolved bundle "{PACKAGE}.v2.0.0" with version "2.0.0": '
        f'validating upgrade for CRD "{CRD_NAME}": ',
    )
    progressing = next(c for c in found["status"]["conditions"] if c["type"] == "Progressing")
    assert detail in progressing["message"], progressing["message"]
    assert found["status"]["install"]["bundle"] == {"name": f"{PACKAGE}.v1.0.0", "version": "1.0.0"}
    installed = next(c for c in found["status"]["conditions"] if c["type"] == "Installed")
    assert (installed["status"], installed["reason"]) == ("True", "Succeeded")
    await wait_revisions(extensions, name, {f"{name}-1": "Active"})


async def test_field_type_change_blocked_under_strict_and_allowed_without_enforcement(
    namespace: str, installer: Installer, extensions: Extensions, custom_catalogs: CustomCatalogs
) -> None:
    account = await installer(namespace)
    name, _ = await _install_v1_with_unsafe_v2(
        extensions, custom_catalogs, namespace, account, _fact_becomes_an_integer
    )
    await _blocked(extensions, name, "^.spec.fact")
    crd = await extensions.kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD_NAME)
    fact = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["fact"]
    assert fact["type"] == "string"

    await extensions.patch_spec(
        name, {"install": {"preflight": {"crdUpgradeSafety": {"enforcement": "None"}}}}
    )
    found = await wait_installed(extensions, name, "2.0.0")
    assert found["status"]["install"]["bundle"] == {"name": f"{PACKAGE}.v2.0.0", "version": "2.0.0"}
    await wait_revisions(extensions, name, {f"{name}-1": "Archived", f"{name}-2": "Active"})
    crd = await extensions.kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD_NAME)
    fact = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["fact"]
    assert fact["type"] == "integer"


async def test_stored_version_removal_blocked_under_strict(
    namespace: str, installer: Installer, extensions: Extensions, custom_catalogs: CustomCatalogs
) -> None:
    account = await installer(namespace)
    name, _ = await _install_v1_with_unsafe_v2(
        extensions, custom_catalogs, namespace, account, _stored_version_renamed
    )
    await _blocked(extensions, name, "storedVersionRemoval: stored versions removed : [v1alpha1]")
    crd = await extensions.kube.get(kinds.CUSTOM_RESOURCE_DEFINITION, CRD_NAME)
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1alpha1"]
