"""operator-controller verifies bundle images against its `--signature-policy` before unpacking.

The real cat-facts-operator bundle, published under a repository prefix whose scope requires a
cosign signature by the `trusted` key, is served by a catalogd of this module (its catalog image is
in a scope that accepts anything). While the bundle image is unsigned, the ClusterExtension is
`Progressing=True/Retrying` with a message naming the bundle image, the rule and the scope, and
nothing is installed (no revision); once the image is signed, the next retry installs it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from e2e.image_signatures.conftest import LABELS, SCOPE, sigstore_signed, write_policy
from e2e.operator_controller.conftest import cat_facts_chain, wait_installed
from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm_runtime import conditions
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import cluster_catalog, delete_catalog, serve_catalog
from olm_testkit.cosign import Cosign, KeyPair
from olm_testkit.extensions import Extensions
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient as PushClient
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess


async def test_an_unsigned_bundle_is_refused_and_installed_once_signed(
    control_plane: ControlPlane,
    olm_crds: None,
    kube: Client,
    *,
    pusher: PushClient,
    registry: Registry,
    cosign: Cosign,
    trusted: KeyPair,
    installer: Installer,
    namespace: str,
    tmp_path: Path,
) -> None:
    prefix = unique("e2e-sig-bundles")
    package = unique("signed-facts")
    scope = f"{registry.host}/{prefix}"
    policy = write_policy(
        tmp_path / "policy" / "policy.json",
        {scope: sigstore_signed(trusted), f"{scope}/catalog": [{"type": "insecureAcceptAnything"}]},
    )
    published = await asyncio.to_thread(
        realdata.publish_custom_catalog,
        pusher,
        registry.host,
        packages=(cat_facts_chain(package, "1.0.0"),),
        repository_prefix=prefix,
    )
    bundle_image = published.bundles[f"{package}.v1.0.0"]
    assert bundle_image.startswith(f"{scope}/")
    flags = (f"--signature-policy={policy}",)
    catalogd = CatalogdProcess(control_plane, tmp_path / "catalogd", scope_selector=SCOPE, extra_args=flags)
    operator_controller = OperatorControllerProcess(
        control_plane, tmp_path / "operator-controller", extra_args=flags
    )
    catalog = unique("e2e-sig")
    async with catalogd.running(), operator_controller.running():
        await serve_catalog(
            kube, cluster_catalog(catalog, published.digest_ref, labels=LABELS, name_label=True)
        )
        extensions = Extensions(kube)
        try:
            name = unique("signed-facts")
            await extensions.create(
                name,
                package,
                namespace,
                await installer(namespace),
                selector={"matchLabels": {names.METADATA_NAME_LABEL: catalog}},
                config={"watchNamespace": namespace},
            )
            expected = (
                f'image {bundle_image} rejected by the signature policy: sigstoreSigned for scope "{scope}": '
                "no signature"
            )

            async def refused() -> bool:
                progressing = conditions.of(await extensions.get(name), "Progressing")
                return progressing.get("reason") == "Retrying" and expected in str(progressing.get("message"))

            try:
                await eventually(refused, what="the unsigned bundle refused", timeout=120)
            except AssertionError as error:
                status = (await extensions.get(name)).get("status")
                raise AssertionError(f"{error}\n{status}\n{operator_controller.log_tail(60)}") from None
            found = await extensions.get(name)
            assert "install" not in (found.get("status") or {})
            revisions = await kube.list(CLUSTER_OBJECT_SET, label_selector=f"{names.OWNER_NAME_LABEL}={name}")
            assert revisions.items == []

            cosign.sign(trusted, bundle_image)
            await wait_installed(extensions, name, "1.0.0")
        finally:
            for created in list(extensions.created):
                await extensions.delete_and_wait_gone(created)
            await delete_catalog(kube, catalog)
