"""operator-controller uses a changed registry CA bundle and a created global pull Secret for the
next bundle pull, without a restart.

The bundles of a fixture catalog are published behind a real `distribution` registry that wants
HTTP Basic credentials (it serves the shared registry's storage; the session's catalogd reads the
catalog image itself from the open registry). The session's operator-controller is stopped while
a process of the test's own runs, with `--pull-cas-dir` a directory updated the way the kubelet
updates a mounted ConfigMap and `--global-pull-secret` naming a Secret that does not exist yet;
the session's process is started again afterwards, also when the test fails.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from e2e.oci.authregistry import PASSWORD, SECRET, USER, dockerconfigjson, htpasswd_registry
from e2e.operator_controller.conftest import CustomCatalogs, Extensions
from olm_runtime.client import Client
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.pki import CertificateAuthority
from olm_runtime.testing.registry import Registry
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.kubeletvolume import project
from olm_testkit.names import unique
from olm_testkit.plugin import Installer
from olm_testkit.processes import OperatorControllerProcess


async def test_bundle_pull_recovers_after_ca_bundle_and_pull_secret_arrive(
    namespace: str,
    installer: Installer,
    extensions: Extensions,
    custom_catalogs: CustomCatalogs,
    *,
    operator_controller: OperatorControllerProcess,
    control_plane: ControlPlane,
    registry: Registry,
    pusher: RegistryClient,
    kube: Client,
    tmp_path: Path,
) -> None:
    account = await installer(namespace)
    with htpasswd_registry(registry, tmp_path / "auth", {USER: PASSWORD}) as auth:
        published = realdata.publish_fixture_catalog(
            pusher, auth.host, version="v1", repository_prefix=unique("e2e-reload")
        )
        # The catalog image from the open registry (catalogd has no credentials); its bundles stay
        # behind the authenticated one.
        open_ref = published.digest_ref.replace(auth.host, registry.host, 1)
        served = await custom_catalogs.serve(dataclasses.replace(published, digest_ref=open_ref))

        cas = tmp_path / "pull-cas"
        unrelated = CertificateAuthority.load_or_create(tmp_path / "unrelated-ca", common_name="unrelated")
        project(cas, {"ca.crt": unrelated.cert_pem})
        process = OperatorControllerProcess(
            control_plane,
            tmp_path / "operator-controller",
            extra_args=(f"--pull-cas-dir={cas}", f"--global-pull-secret={namespace}/{SECRET}"),
        )
        name = unique("reload")
        assert operator_controller.stop() == 0, operator_controller.log_tail()
        try:
            process.start()
            await process.wait_ready()
            assert process.process is not None
            pid = process.process.pid
            await extensions.create(
                name, "test", namespace, account, version="1.0.0", selector={"matchLabels": served.label}
            )
            await extensions.wait_condition(
                name, "Progressing", "True", reason="Retrying", message_contains="TLS", timeout=90
            )

            project(cas, {"ca.crt": registry.ca_file.read_bytes()})  # as a ConfigMap update lands
            await extensions.wait_condition(
                name,
                "Progressing",
                "True",
                reason="Retrying",
                message_contains="requires credentials",
                timeout=90,
            )

            await kube.create(dockerconfigjson(namespace, auth.host, PASSWORD))
            found = await extensions.wait_condition(
                name, "Installed", "True", reason="Succeeded", timeout=180
            )
            assert found["status"]["install"]["bundle"]["version"] == "1.0.0"

            assert process.process is not None
            assert process.process.pid == pid
            assert process.process.poll() is None
        except AssertionError as error:
            raise AssertionError(
                f"{error}\n--- operator-controller log ---\n{process.log_tail(150)}"
            ) from None
        finally:
            try:
                await extensions.delete_and_wait_gone(name)  # while the process that installed it runs
            finally:
                process.stop()
                operator_controller.start()
                await operator_controller.wait_ready()
