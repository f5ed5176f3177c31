"""Install modes and `spec.config.inline.watchNamespace`: what a bundle's supported install modes
require of the configuration, reported as `InvalidConfiguration` until the spec fits."""

from __future__ import annotations

from e2e.operator_controller.conftest import Extensions, ServedCatalog
from olm_runtime.client import kinds
from olm_testkit.names import unique
from olm_testkit.plugin import Installer

TARGET_NAMESPACES_ANNOTATION = "olm.targetNamespaces"


def inline(watch_namespace: str) -> dict[str, object]:
    return {"configType": "Inline", "inline": {"watchNamespace": watch_namespace}}


async def test_own_namespace_bundle_needs_the_install_namespace_as_watch_namespace(
    namespace: str, installer: Installer, extensions: Extensions, community_catalog: ServedCatalog
) -> None:
    account = await installer(namespace)
    name = unique("cat-facts")
    await extensions.create(
        name,
        "cat-facts-operator",
        namespace,
        account,
        version="1.1.2",
        selector={"matchLabels": community_catalog.label},
    )
    found = await extensions.wait_condition(
        name,
        "Progressing",
        "False",
        reason="InvalidConfiguration",
        message_contains='required field "watchNamespace" is missing',
        timeout=180,
    )
    installed = [c for c in found["status"]["conditions"] if c["type"] == "Installed"]
    assert installed[0]["status"] == "False", installed

    await extensions.patch_spec(name, {"config": inline(f"{namespace}-elsewhere")})
    await extensions.wait_condition(
        name,
        "Progressing",
        "False",
        reason="InvalidConfiguration",
        message_contains=f'must be "{namespace}"',
    )
    deployments = await extensions.kube.list(kinds.DEPLOYMENT, namespace=namespace)
    assert deployments.items == [], "nothing is applied while the configuration is invalid"

    await extensions.patch_spec(name, {"config": inline(namespace)})
    found = await extensions.wait_condition(name, "Installed", "True", reason="Succeeded", timeout=180)
    assert found["status"]["install"]["bundle"] == {"name": "cat-facts-operator.v1.1.2", "version": "1.1.2"}
    await extensions.wait_condition(name, "Progressing", "True", reason="Succeeded")
    deployment = await extensions.kube.get(
        kinds.DEPLOYMENT, "cat-facts-operator-controller-manager", namespace=namespace
    )
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations[TARGET_NAMESPACES_ANNOTATION] == namespace


async def test_all_namespaces_bundle_rejects_a_watch_namespace(
    namespace: str, installer: Installer, extensions: Extensions, community_catalog: ServedCatalog
) -> None:
    account = await installer(namespace)
    name = unique("kube-green-watch")
    await extensions.create(
        name,
        "kube-green",
        namespace,
        account,
        version="0.7.1",
        selector={"matchLabels": community_catalog.label},
        config={"watchNamespace": namespace},
    )
    found = await extensions.wait_condition(
        name,
        "Progressing",
        "False",
        reason="InvalidConfiguration",
        message_contains='unknown field "watchNamespace"',
        timeout=180,
    )
    installed = [c for c in found["status"]["conditions"] if c["type"] == "Installed"]
    assert installed[0]["status"] == "False", installed
    assert "install" not in found["status"] or found["status"]["install"] is None
