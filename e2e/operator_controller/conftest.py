"""Fixtures of the operator-controller e2e tests: real catalogs, catalogd and operator-controller.

Shared for the session (they are expensive and tests do not change them): the CRDs, the system
namespace `olmv1-system`, one catalogd and one operator-controller process, and two published
catalogs served by catalogd:

- `community_catalog`: kube-green, sailoperator, cat-facts-operator and infinispan from the
  community catalog, plus argocd-operator (0.7.0 -> 0.17.0 -> 0.18.0 on channel `alpha`, whose
  package has no catalog in the data) built from its real bundles;
- `fixture_catalog`: upstream's e2e test catalog v1 with its bundles.

Tests isolate themselves by unique names and namespaces, and select a catalog with its
`CATALOG_LABEL` when a package could come from more than one. When a test fails, the logs of
the processes it used are printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from e2e.catalogs import delete_catalog
from e2e.cli.test_olmctl import Olmctl
from e2e.extensions import Extensions, condition, unique
from hack.crdgen import install as crds
from hack.images import realdata
from hack.images.registry import RegistryClient
from hack.installer import create_cluster_admin_account
from hack.processes import CatalogdProcess, OperatorControllerProcess
from olm import testing_seams
from olm.api import names
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_OBJECT_SET
from olm_runtime.client import Client, errors, kinds, load_config
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry

# The suite's tests import these from here, beside the fixtures.
__all__ = ["Extensions", "condition", "unique"]

SYSTEM_NAMESPACE = names.DEFAULT_SYSTEM_NAMESPACE
CATALOG_LABEL = "e2e.olm-py.io/catalog"
"""Label on the session's ClusterCatalogs: `community` or `fixture`."""
COMMUNITY_PACKAGES = ("kube-green", "sailoperator", "cat-facts-operator", "infinispan")
FIELD_MANAGER = "e2e-operator-controller"

DEADLINE_MINUTE_SECONDS = 1.0
"""Seconds one minute of `progressDeadlineMinutes` lasts in the session's operator-controller."""


# --- logs of failed tests ----------------------------------------------------------------------


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when == "call":
        item.rep_call = report  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _show_logs_on_failure(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    report = getattr(request.node, "rep_call", None)
    if report is None or not report.failed:
        return
    # funcargs holds every fixture value the test got, directly or through other fixtures.
    funcargs = getattr(request.node, "funcargs", {})
    for name in ("catalogd", "operator_controller"):
        proc = funcargs.get(name)
        if isinstance(proc, (CatalogdProcess, OperatorControllerProcess)):
            print(f"\n--- {proc.component} log ({proc.workdir}) ---\n{proc.log_tail(150)}")


# --- cluster -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
async def kube(control_plane: ControlPlane) -> AsyncIterator[Client]:
    """An admin client for the session."""
    config = await load_config(kubeconfig=control_plane.kubeconfig)
    async with await Client.connect(config, field_manager=FIELD_MANAGER) as client:
        yield client


@pytest.fixture(scope="session")
async def olm_crds(kube: Client) -> None:
    """The OLM CRDs installed and served, and the system namespace created."""
    await crds.install_with_system_namespace(kube, field_manager="e2e-crds")


@pytest.fixture(scope="session")
def pusher(registry: Registry) -> RegistryClient:
    return RegistryClient(host=registry.host, ca_file=registry.ca_file)


# --- processes ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
async def catalogd(
    control_plane: ControlPlane, olm_crds: None, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CatalogdProcess]:
    process = CatalogdProcess(control_plane, tmp_path_factory.mktemp("catalogd"))
    async with process.running():
        yield process


@pytest.fixture(scope="session")
async def operator_controller(
    control_plane: ControlPlane, olm_crds: None, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[OperatorControllerProcess]:
    process = OperatorControllerProcess(
        control_plane,
        tmp_path_factory.mktemp("operator-controller"),
        # progressDeadlineMinutes' minimum is 10: let a minute last a second so tests can cross one.
        env={testing_seams.DEADLINE_MINUTE_SECONDS: str(DEADLINE_MINUTE_SECONDS)},
    )
    async with process.running():
        yield process


# --- catalogs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ServedCatalog:
    """A published catalog image and the ClusterCatalog catalogd serves it as."""

    name: str
    """The ClusterCatalog's name (also its `olm.operatorframework.io/metadata.name` label)."""
    label: dict[str, str]
    """A label selecting this ClusterCatalog alone, for `Extensions.create(selector=...)`."""
    published: realdata.PublishedCatalog
    base_url: str
    """`status.urls.base`: where catalogd serves its content."""


async def serve_catalog(
    kube: Client, published: realdata.PublishedCatalog, *, kind: str, timeout: float = 120.0
) -> ServedCatalog:
    """Create a ClusterCatalog for `published` (by digest) and wait until it is Serving it."""
    name = unique(f"e2e-{kind}")
    obj = {
        "apiVersion": CLUSTER_CATALOG.api_version,
        "kind": CLUSTER_CATALOG.kind,
        # catalogd's webhook sets the name label in a cluster; here no webhook is registered.
        "metadata": {"name": name, "labels": {CATALOG_LABEL: kind, names.METADATA_NAME_LABEL: name}},
        "spec": {"source": {"type": "Image", "image": {"ref": published.digest_ref}}},
    }
    await kube.create(obj)
    found: dict[str, Any] = {}

    async def serving() -> bool:
        nonlocal found
        found = dict(await kube.get(CLUSTER_CATALOG, name))
        return condition(found, "Serving").get("status") == "True"

    try:
        await eventually(serving, what=f"ClusterCatalog {name} to serve", timeout=timeout)
    except AssertionError as error:
        raise AssertionError(f"{error}; last status: {json.dumps(found.get('status'), indent=1)}") from None
    return ServedCatalog(
        name=name,
        label={"olm.operatorframework.io/metadata.name": name},
        published=published,
        base_url=found["status"]["urls"]["base"],
    )


@pytest.fixture(scope="session")
def repository_prefix() -> str:
    """Registry repositories of this session (the registry outlives nothing, but stays unique)."""
    return unique("e2e-oc")


@pytest.fixture(scope="session")
async def community_catalog(
    kube: Client, catalogd: CatalogdProcess, pusher: RegistryClient, repository_prefix: str
) -> AsyncIterator[ServedCatalog]:
    argocd = realdata.CustomPackage(
        name="argocd-operator",
        channel="alpha",
        bundles=(
            realdata.CustomBundle(version="0.7.0", source=realdata.real_bundle("argocd-operator", "0.7.0")),
            realdata.CustomBundle(
                version="0.17.0",
                source=realdata.real_bundle("argocd-operator", "0.17.0"),
                replaces="argocd-operator.v0.7.0",
            ),
            realdata.CustomBundle(
                version="0.18.0",
                source=realdata.real_bundle("argocd-operator", "0.18.0"),
                replaces="argocd-operator.v0.17.0",
            ),
        ),
    )
    published = realdata.publish_community_catalog(
        pusher,
        pusher.host,
        packages=COMMUNITY_PACKAGES,
        repository_prefix=f"{repository_prefix}/community",
        extra=(argocd,),
    )
    served = await serve_catalog(kube, published, kind="community")
    try:
        yield served
    finally:
        await delete_catalog(kube, served.name)


@pytest.fixture(scope="session")
async def fixture_catalog(
    kube: Client, catalogd: CatalogdProcess, pusher: RegistryClient, repository_prefix: str
) -> AsyncIterator[ServedCatalog]:
    published = realdata.publish_fixture_catalog(
        pusher, pusher.host, version="v1", repository_prefix=f"{repository_prefix}/fixture"
    )
    served = await serve_catalog(kube, published, kind="fixture")
    try:
        yield served
    finally:
        await delete_catalog(kube, served.name)


@pytest.fixture
def olmctl(control_plane: ControlPlane) -> Olmctl:
    """olmctl run as a subprocess against the session's cluster (the olmctl_* test modules)."""
    return Olmctl(control_plane.kubeconfig, control_plane.ca_file)


# --- installer service accounts ----------------------------------------------------------------


Installer = Callable[[str], Awaitable[str]]
"""`await installer(namespace)`: the name of a ServiceAccount there bound to cluster-admin."""


@pytest.fixture
async def installer(kube: Client) -> AsyncIterator[Installer]:
    """For tests that are not about permissions: a ServiceAccount that may do anything. Its
    ClusterRoleBinding is deleted after the test (the namespace takes the ServiceAccount)."""
    bindings: list[str] = []

    async def make(namespace: str) -> str:
        name = unique("installer")
        await create_cluster_admin_account(kube, namespace, name, binding=name)
        bindings.append(name)
        return name

    try:
        yield make
    finally:
        for name in bindings:
            with contextlib.suppress(errors.NotFound):
                await kube.delete(kinds.CLUSTER_ROLE_BINDING, name)


# --- ClusterExtensions -------------------------------------------------------------------------


@pytest.fixture
async def extensions(
    kube: Client, operator_controller: OperatorControllerProcess
) -> AsyncIterator[Extensions]:
    helper = Extensions(kube)
    try:
        yield helper
    finally:
        for name in list(helper.created):
            await helper.delete_and_wait_gone(name)


# --- upgrades: helpers shared by test_upgrades, test_upgrade_safety, test_revisions and ------------
# --- test_catalog_polling ----------------------------------------------------------------------

EVENTS_NAMESPACE = "default"
"""Where Events regarding a cluster-scoped object (a ClusterExtension) are written."""


async def wait_installed(
    extensions: Extensions, name: str, version: str, *, timeout: float = 180.0
) -> dict[str, Any]:
    """Wait until `status.install.bundle.version` is `version` and `Progressing` is True/Succeeded
    for the current generation; the extension. On timeout the failure shows the whole status."""
    found: dict[str, Any] = {}

    async def installed() -> bool:
        nonlocal found
        found = await extensions.get(name)
        bundle = ((found.get("status") or {}).get("install") or {}).get("bundle") or {}
        progressing = condition(found, "Progressing")
        return (
            bundle.get("version") == version
            and progressing.get("status") == "True"
            and progressing.get("reason") == "Succeeded"
            and progressing.get("observedGeneration") == found["metadata"].get("generation")
        )

    try:
        await eventually(
            installed, what=f"ClusterExtension {name} to have {version} installed", timeout=timeout
        )
    except AssertionError as error:
        raise AssertionError(f"{error}\nlast status:\n{json.dumps(found.get('status'), indent=1)}") from None
    return found


async def list_revisions(kube: Client, extension: str) -> list[dict[str, Any]]:
    """The extension's ClusterObjectSets, oldest first."""
    selector = f"{names.OWNER_KIND_LABEL}={names.CLUSTER_EXTENSION},{names.OWNER_NAME_LABEL}={extension}"
    listed = await kube.list(CLUSTER_OBJECT_SET, label_selector=selector)
    return sorted((dict(item) for item in listed.items), key=lambda cos: int(cos["spec"]["revision"]))


def revision_states(revisions: list[dict[str, Any]]) -> dict[str, str]:
    """Revision name -> `spec.lifecycleState`."""
    return {cos["metadata"]["name"]: cos["spec"]["lifecycleState"] for cos in revisions}


async def wait_revisions(
    extensions: Extensions, name: str, states: dict[str, str], *, timeout: float = 60.0
) -> list[dict[str, Any]]:
    """Wait until the extension's revisions are exactly `states` (name -> lifecycle state) and its
    `status.activeRevisions` names the active ones; the revisions, oldest first."""
    revisions: list[dict[str, Any]] = []
    active: list[str] = []
    wanted_active = [revision for revision, state in states.items() if state == "Active"]

    async def settled() -> bool:
        nonlocal revisions, active
        revisions = await list_revisions(extensions.kube, name)
        found = await extensions.get(name)
        active = [r["name"] for r in (found.get("status") or {}).get("activeRevisions") or []]
        return revision_states(revisions) == states and active == wanted_active

    try:
        await eventually(settled, what=f"revisions of {name} to be {states}", timeout=timeout)
    except AssertionError as error:
        raise AssertionError(
            f"{error}; last: {revision_states(revisions)}, activeRevisions {active}"
        ) from None
    return revisions


async def wait_event(
    kube: Client,
    extension: str,
    *,
    type: str,
    reason: str,
    note_contains: str = "",
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Wait for an `events.k8s.io/v1` Event of `type` and `reason` regarding ClusterExtension
    `extension`, written by operator-controller, whose note contains `note_contains`; that Event."""
    found: dict[str, Any] = {}
    seen: list[str] = []

    async def recorded() -> bool:
        nonlocal found
        listed = await kube.list(kinds.EVENTS_EVENT, namespace=EVENTS_NAMESPACE)
        seen.clear()
        for event in listed.items:
            regarding = event.get("regarding") or {}
            if regarding.get("kind") == names.CLUSTER_EXTENSION and regarding.get("name") == extension:
                seen.append(f"{event.get('type')} {event.get('reason')}: {event.get('note')}")
            if (
                regarding.get("kind") == names.CLUSTER_EXTENSION
                and regarding.get("name") == extension
                and event.get("type") == type
                and event.get("reason") == reason
                and event.get("reportingController") == "operator-controller"
                and note_contains in str(event.get("note") or "")
            ):
                found = dict(event)
                return True
        return False

    wanted = f"a {type} {reason} Event regarding {extension}" + (
        f" ~{note_contains!r}" if note_contains else ""
    )
    try:
        await eventually(recorded, what=wanted, timeout=timeout)
    except AssertionError as error:
        raise AssertionError(f"{error}; its Events: {seen}") from None
    return found


def crd_version_annotation(version: str) -> Callable[[dict[str, Any]], None]:
    """An `edit_crd` for `realdata.CustomBundle`: annotate the CRD with `version`, so bundles that
    differ only in version still render different content (the generated RBAC names keep only
    the first characters of the CSV name) and each upgrade makes a revision."""

    def edit(crd: dict[str, Any]) -> None:
        crd["metadata"].setdefault("annotations", {})["e2e.olm-py.io/bundle-version"] = version

    return edit


@dataclass
class CustomCatalogs:
    """Publishes custom catalogs (`realdata.publish_custom_catalog`) in repositories of their own
    and serves them as ClusterCatalogs; deletes those at teardown."""

    kube: Client
    pusher: RegistryClient
    repository_prefix: str
    served: list[str] = field(default_factory=list)

    def repository(self) -> str:
        """A fresh repository prefix for one catalog (publish to it again to update a tag)."""
        return f"{self.repository_prefix}/{unique('custom')}"

    async def publish(
        self, packages: tuple[realdata.CustomPackage, ...], *, repository: str, tag: str = "latest"
    ) -> realdata.PublishedCatalog:
        """Build and push (in a thread: building images is blocking work)."""
        return await asyncio.to_thread(
            realdata.publish_custom_catalog,
            self.pusher,
            self.pusher.host,
            packages=packages,
            repository_prefix=repository,
            tag=tag,
        )

    async def serve(
        self,
        published: realdata.PublishedCatalog,
        *,
        poll_interval_minutes: int | None = None,
        timeout: float = 120.0,
    ) -> ServedCatalog:
        """By digest, or by tag (`published.ref`) polled every `poll_interval_minutes` when given
        (catalogd's test minute is one second)."""
        if poll_interval_minutes is None:
            served = await serve_catalog(self.kube, published, kind="custom", timeout=timeout)
            self.served.append(served.name)
            return served
        name = unique("e2e-custom")
        obj = {
            "apiVersion": CLUSTER_CATALOG.api_version,
            "kind": CLUSTER_CATALOG.kind,
            "metadata": {"name": name, "labels": {CATALOG_LABEL: "custom", names.METADATA_NAME_LABEL: name}},
            "spec": {
                "source": {
                    "type": "Image",
                    "image": {"ref": published.ref, "pollIntervalMinutes": poll_interval_minutes},
                }
            },
        }
        await self.kube.create(obj)
        self.served.append(name)
        found: dict[str, Any] = {}

        async def serving() -> bool:
            nonlocal found
            found = dict(await self.kube.get(CLUSTER_CATALOG, name))
            return condition(found, "Serving").get("status") == "True"

        await eventually(serving, what=f"ClusterCatalog {name} to serve", timeout=timeout)
        return ServedCatalog(
            name=name,
            label={names.METADATA_NAME_LABEL: name},
            published=published,
            base_url=found["status"]["urls"]["base"],
        )


@pytest.fixture
async def custom_catalogs(
    kube: Client, catalogd: CatalogdProcess, pusher: RegistryClient, repository_prefix: str
) -> AsyncIterator[CustomCatalogs]:
    helper = CustomCatalogs(kube, pusher, f"{repository_prefix}/custom")
    try:
        yield helper
    finally:
        for name in helper.served:
            await delete_catalog(kube, name)


# --- end of the upgrade helpers ------------------------------------------------------------------
