"""catalogd uses a changed global pull Secret and a changed registry CA bundle without a restart.

Each test runs its own catalogd (the module fixture has neither flag to change) against a real
`distribution` registry: for the pull Secret, one that wants HTTP Basic credentials (serving the
shared registry's storage); for the CA bundle, the shared TLS registry, with `--pull-cas-dir` a
directory updated the way the kubelet updates a mounted ConfigMap. Each test ends with the same
process (same PID, still running) serving the catalog it could not pull at first.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from e2e.catalogd.conftest import Catalogs, write_catalog
from e2e.oci.authregistry import PASSWORD, SECRET, USER, dockerconfigjson, htpasswd_registry, pull_secret
from olm.process import pullconfig
from olm_runtime import conditions
from olm_runtime.client import Client, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.pki import CertificateAuthority
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit.catalogs import cluster_catalog, push_catalog
from olm_testkit.images.registry import RegistryClient as PushClient
from olm_testkit.kubeletvolume import project
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess


@contextlib.asynccontextmanager
async def running(process: CatalogdProcess, kube: Client) -> AsyncIterator[Catalogs]:
    """`process` running, and a `Catalogs` whose catalogs are finalized by it before it stops;
    a failure shows the process's log."""
    async with process.running():
        catalogs = Catalogs(kube)
        try:
            yield catalogs
        except AssertionError as error:
            raise AssertionError(f"{error}\n--- catalogd log ---\n{process.log_tail(150)}") from None
        finally:
            await catalogs.delete_all()


def assert_still_running(process: CatalogdProcess, pid: int) -> None:
    """The process started with `pid` never restarted: it is the one running now."""
    assert process.process is not None
    assert process.process.pid == pid
    assert process.process.poll() is None


def progressing_message(contains: str) -> Any:
    return lambda catalog: contains in str(conditions.of(catalog, "Progressing").get("message", ""))


def catalogd_with_cas_dir(
    control_plane: ControlPlane,
    pusher: PushClient,
    registry: Registry,
    tmp_path: Path,
    *,
    package: str,
    bundles: Mapping[str, bytes],
) -> tuple[str, Path, CatalogdProcess]:
    """A catalog of `package` pushed to the TLS registry, the `--pull-cas-dir` first holding
    `bundles`, and a catalogd (not started) reading it: `(ref, cas dir, process)`."""
    ref = push_catalog(
        pusher, write_catalog(tmp_path / "fbc", package, ["1.0.0"]), f"{registry.host}/{unique('e2e-ca')}:v1"
    )
    cas = tmp_path / "pull-cas"
    project(cas, bundles)
    process = CatalogdProcess(control_plane, tmp_path / "catalogd", extra_args=(f"--pull-cas-dir={cas}",))
    return ref, cas, process


async def invalid_pull_secret_event(kube: Client, namespace: str) -> dict[str, Any]:
    """The Warning Event catalogd recorded about the unusable pull Secret."""
    found: dict[str, Any] = {}

    async def recorded() -> bool:
        nonlocal found
        for event in (await kube.list(kinds.EVENTS_EVENT, namespace=namespace)).items:
            regarding = event.get("regarding") or {}
            if (
                regarding.get("kind") == "Secret"
                and regarding.get("name") == SECRET
                and event.get("reason") == pullconfig.INVALID_REASON
                and event.get("reportingController") == "catalogd"
            ):
                found = dict(event)
                return True
        return False

    await eventually(recorded, what=f"an {pullconfig.INVALID_REASON} Event regarding Secret {SECRET}")
    return found


async def test_pull_secret_created_changed_and_deleted_is_used_by_the_next_pull(
    control_plane: ControlPlane,
    olm_crds: None,
    kube: Client,
    *,
    registry: Registry,
    pusher: PushClient,
    namespace: str,
    tmp_path: Path,
) -> None:
    repository = unique("e2e-pull-secret")
    first = push_catalog(
        pusher, write_catalog(tmp_path / "v1", "reload", ["1.0.0"]), f"{registry.host}/{repository}:v1"
    )
    second = push_catalog(
        pusher,
        write_catalog(tmp_path / "v2", "reload", ["1.0.0", "1.1.0"]),
        f"{registry.host}/{repository}:v2",
    )
    process = CatalogdProcess(
        control_plane, tmp_path / "catalogd", extra_args=(f"--global-pull-secret={namespace}/{SECRET}",)
    )
    with htpasswd_registry(registry, tmp_path / "auth", {USER: PASSWORD}) as auth:
        first_ref, second_ref = (ref.replace(registry.host, auth.host, 1) for ref in (first, second))
        async with running(process, kube) as catalogs:
            assert process.process is not None
            pid = process.process.pid
            name = unique("pull-secret")

            # No Secret: pulls are anonymous, and the registry wants credentials.
            await catalogs.create(cluster_catalog(name, first_ref))
            await catalogs.wait(
                name, "an anonymous pull refused", progressing_message("requires credentials")
            )

            # A Secret that is not a dockerconfigjson: an Event names it, pulls stay anonymous.
            await kube.create(pull_secret(namespace, {".dockerconfigjson": b"not json"}))
            event = await invalid_pull_secret_event(kube, namespace)
            assert f"{namespace}/{SECRET}" in event["note"], event
            assert "not valid JSON" in event["note"], event

            # Created again with a wrong password, then changed to the right one.
            await kube.delete(kinds.SECRET, SECRET, namespace=namespace)
            await kube.create(dockerconfigjson(namespace, auth.host, "wrong"))
            await catalogs.wait(name, "the wrong password refused", progressing_message("refused access"))
            await kube.apply(
                dockerconfigjson(namespace, auth.host, PASSWORD), field_manager="e2e", force=True
            )
            await catalogs.wait_serving(name, first_ref, timeout=90)

            # Deleted: the next pull is anonymous again.
            await kube.delete(kinds.SECRET, SECRET, namespace=namespace)
            other = unique("pull-secret")
            await catalogs.create(cluster_catalog(other, second_ref))
            await catalogs.wait(
                other, "an anonymous pull refused", progressing_message("requires credentials")
            )

            assert_still_running(process, pid)


async def test_ca_bundle_changed_in_the_cas_dir_is_trusted_by_the_next_pull(
    control_plane: ControlPlane,
    olm_crds: None,
    kube: Client,
    *,
    registry: Registry,
    pusher: PushClient,
    tmp_path: Path,
) -> None:
    unrelated = CertificateAuthority.load_or_create(tmp_path / "unrelated-ca", common_name="unrelated")
    ref, cas, process = catalogd_with_cas_dir(
        control_plane, pusher, registry, tmp_path, package="trust", bundles={"ca.crt": unrelated.cert_pem}
    )
    async with running(process, kube) as catalogs:
        assert process.process is not None
        pid = process.process.pid
        name = unique("ca-bundle")

        await catalogs.create(cluster_catalog(name, ref))
        await catalogs.wait(name, "the registry's certificate refused", progressing_message("TLS"))

        project(cas, {"ca.crt": registry.ca_file.read_bytes()})  # as a ConfigMap update lands
        await catalogs.wait_serving(name, ref, timeout=90)

        assert_still_running(process, pid)


async def test_an_unloadable_ca_bundle_is_named_in_the_condition(
    control_plane: ControlPlane,
    olm_crds: None,
    kube: Client,
    *,
    registry: Registry,
    pusher: PushClient,
    tmp_path: Path,
) -> None:
    ref, cas, process = catalogd_with_cas_dir(
        control_plane,
        pusher,
        registry,
        tmp_path,
        package="broken",
        bundles={"ca.crt": registry.ca_file.read_bytes(), "broken.pem": b"not a certificate\n"},
    )
    async with running(process, kube) as catalogs:
        name = unique("ca-broken")
        await catalogs.create(cluster_catalog(name, ref))
        await catalogs.wait(name, "the broken bundle named", progressing_message(f"{cas / 'broken.pem'}"))

        project(cas, {"ca.crt": registry.ca_file.read_bytes()})
        await catalogs.wait_serving(name, ref, timeout=90)
