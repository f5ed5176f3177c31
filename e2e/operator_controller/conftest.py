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
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from olm.api import names
from olm.api.kinds import CLUSTER_OBJECT_SET
from olm.process import testing_seams
from olm_runtime import conditions
from olm_runtime.client import Client, kinds
from olm_runtime.testing.controlplane import ControlPlane
from olm_runtime.testing.poll import eventually
from olm_runtime.testing.registry import Registry
from olm_testkit import catalogs
from olm_testkit.catalogs import delete_catalog
from olm_testkit.extensions import Extensions
from olm_testkit.images import realdata
from olm_testkit.images.registry import RegistryClient
from olm_testkit.names import unique
from olm_testkit.processes import CatalogdProcess, OperatorControllerProcess

# The suite's tests import these from here, beside the fixtures.
__all__ = ["Extensions"]

SYSTEM_NAMESPACE = names.DEFAULT_SYSTEM_NAMESPACE
CATALOG_LABEL = "e2e.olm-py.io/catalog"
"""Label on the session's ClusterCatalogs: `community` or `fixture`."""
SUITE_LABELS = {testing_seams.SCOPE_LABEL: "operator-controller"}
"""On every ClusterCatalog of this suite: its catalogd serves only these."""
SUITE_SCOPE = f"{testing_seams.SCOPE_LABEL}=operator-controller"
COMMUNITY_PACKAGES = ("kube-green", "sailoperator", "cat-facts-operator", "infinispan")
FIELD_MANAGER = "e2e-operator-controller"

DEADLINE_MINUTE_SECONDS = 1.0
"""Seconds one minute of `progressDeadlineMinutes` lasts in the session's operator-controller."""


# --- processes ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
async def catalogd(
    control_plane: ControlPlane, olm_crds: None, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CatalogdProcess]:
    # Only this suite's catalogs: another suite's catalogd (e2e/catalogd, e2e/cli) may run in the
    # same session, and two catalogds would each write their own URL into one catalog's status.
    process = CatalogdProcess(control_plane, tmp_path_factory.mktemp("catalogd"), scope_selector=SUITE_SCOPE)
    async with process.running():
        yield process


@pytest.fixture(scope="session")
async def operator_controller(
    control_plane: ControlPlane, olm_crds: None, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[OperatorControllerProcess]:
    process = OperatorControllerProcess(
        control_plane,
        tmp_path_factory.mktemp("operator-controller"),
        # progressDeadlineMinutes' minimum is 10, a bundle image's pollIntervalMinutes' is 1: let a
        # minute last a second so tests can cross one.
        env={
            testing_seams.DEADLINE_MINUTE_SECONDS: str(DEADLINE_MINUTE_SECONDS),
            testing_seams.POLL_MINUTE_SECONDS: str(DEADLINE_MINUTE_SECONDS),
        },
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
    kube: Client,
    published: realdata.PublishedCatalog,
    *,
    kind: str,
    poll_minutes: int | None = None,
    timeout: float = 120.0,
) -> ServedCatalog:
    """Serve `published` as a new ClusterCatalog labelled `CATALOG_LABEL: kind`: by digest, or by
    tag (`published.ref`) polled every `poll_minutes` when given (catalogd's test minute is a
    second)."""
    name = unique(f"e2e-{kind}")
    ref = published.digest_ref if poll_minutes is None else published.ref
    obj = catalogs.cluster_catalog(
        name, ref, labels={CATALOG_LABEL: kind, **SUITE_LABELS}, name_label=True, poll_minutes=poll_minutes
    )
    found = await catalogs.serve_catalog(kube, obj, timeout=timeout)
    return ServedCatalog(
        name=name,
        label={names.METADATA_NAME_LABEL: name},
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


# --- ClusterExtensions -------------------------------------------------------------------------


@pytest.fixture
def pull(registry: Registry, tmp_path: Path) -> tuple[str, ...]:
    """The flags that let olmctl pull bundles from the session's registry."""
    return ("--registry-ca", str(registry.ca_file), "--cache-dir", str(tmp_path / "cache"))


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
        progressing = conditions.of(found, "Progressing")
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
    reporter: str = "operator-controller",
) -> dict[str, Any]:
    """Wait for an `events.k8s.io/v1` Event of `type` and `reason` regarding ClusterExtension
    `extension`, written by `reporter` (operator-controller's ClusterExtension controller unless
    told otherwise), whose note contains `note_contains`; that Event."""
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
                and event.get("reportingController") == reporter
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


def cat_facts_chain(
    package: str,
    *versions: str,
    edit_crd: Callable[[str], Callable[[dict[str, Any]], None]] = crd_version_annotation,
    properties: dict[str, tuple[dict[str, Any], ...]] | None = None,
    bundle_properties: dict[str, tuple[dict[str, Any], ...]] | None = None,
) -> realdata.CustomPackage:
    """The real cat-facts-operator 1.0.0 bundle published as each of `versions` of `package`, each
    replacing the one before; `edit_crd(version)` edits that version's CRD, `properties[version]`
    are more properties of its catalog entry and `bundle_properties[version]` its bundle's own
    `metadata/properties.yaml`."""
    source = realdata.real_bundle("cat-facts-operator", "1.0.0")
    return realdata.CustomPackage(
        name=package,
        bundles=tuple(
            realdata.CustomBundle(
                version=version,
                source=source,
                replaces=f"{package}.v{versions[index - 1]}" if index else None,
                edit_crd=edit_crd(version),
                properties=(properties or {}).get(version, ()),
                bundle_properties=(bundle_properties or {}).get(version, ()),
            )
            for index, version in enumerate(versions)
        ),
    )


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
        served = await serve_catalog(
            self.kube, published, kind="custom", poll_minutes=poll_interval_minutes, timeout=timeout
        )
        self.served.append(served.name)
        return served

    async def polled(self, *packages: realdata.CustomPackage, tag: str) -> PolledCatalog:
        """`packages` published under `tag` in a repository of their own, served by tag."""
        repository = self.repository()
        published = await self.publish(packages, repository=repository, tag=tag)
        served = await self.serve(published, poll_interval_minutes=1)
        return PolledCatalog(catalogs=self, repository=repository, tag=tag, served=served)


@dataclass(frozen=True, kw_only=True)
class PolledCatalog:
    """A custom catalog served by tag, which catalogd polls every test minute: `publish` changes
    what the tag holds."""

    catalogs: CustomCatalogs
    repository: str
    tag: str
    served: ServedCatalog

    async def publish(self, *packages: realdata.CustomPackage) -> realdata.PublishedCatalog:
        return await self.catalogs.publish(packages, repository=self.repository, tag=self.tag)

    def fields(self, namespace: str) -> dict[str, Any]:
        """`Extensions.create` fields for an extension from this catalog that watches its own
        `namespace` (cat-facts-operator installs only so)."""
        return {"selector": {"matchLabels": self.served.label}, "config": {"watchNamespace": namespace}}


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
