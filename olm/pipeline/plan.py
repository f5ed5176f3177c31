"""One install or upgrade, planned: catalogs -> resolution -> bundle -> objects -> preflight verdicts.

`plan(request, sources)` runs every stage in order for one ClusterExtension spec and returns a
`Plan`: the bundle, the objects operator-controller would apply, and the verdict of each preflight
(CRD upgrade safety, the ServiceAccount's permissions, collisions with objects another owner
controls). olmctl's previews (`install`, `upgrade`, `rbac`) call it. operator-controller's
ClusterExtension steps call the same stage functions one step at a time (`gather`, `choose`,
`fetch`, `render`, then the verdicts of `preflight`), because each step reports its own status and
a steady reconcile stops between them; the arguments each stage gets from the spec are computed
here, once, for both.

A stage that refuses raises `Refused`, whose `reason` and `message` are the ClusterExtension
condition's, and `retry` says whether trying again can help (a registry that is down) or only a
change can (a bundle that is not registry+v1). Catalogs that give no content for the package raise
`NoCatalogContent`, which carries what was gathered, so each caller words it for its audience.
Nothing here writes to the cluster.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from olm import fbc, oci, semver
from olm.api import conditions as api
from olm.api.extensionspec import AutomaticUpdates, ExtensionSpec, PermissionGrowth
from olm.pipeline.catalogs import PackageContent
from olm.pipeline.catalogs.gathering import UNREACHABLE, Gathered, PackageReader, gather_from
from olm.pipeline.preflight import growth, readiness
from olm.pipeline.preflight.verdicts import (
    Collisions,
    CRDSafety,
    Permissions,
    check_collisions,
    check_crd_safety,
    check_permissions,
    next_revision,
)
from olm.pipeline.render import (
    CertificateProvider,
    InvalidConfigurationError,
    RenderError,
    manifests_for,
    parse_config,
)
from olm.pipeline.resolve import (
    Deprecation,
    Installed,
    Resolution,
    ResolutionError,
    ResolvedBundle,
    Update,
    acceptance,
    cluster_version,
    newest_update,
    reachable,
    resolve,
    unsupported,
    update_class,
)
from olm.pipeline.unpack import BundleUnpacker, Unpacked, UnpackError
from olm.registryv1 import ALL_NAMESPACES, OWN_NAMESPACE, SINGLE_NAMESPACE, RegistryV1
from olm_runtime.client import Client, errors

__all__ = [
    "Choice",
    "Held",
    "NoCatalogContent",
    "Plan",
    "Refused",
    "Request",
    "Sources",
    "Unresolved",
    "Updates",
    "choose",
    "fetch",
    "fetch_image",
    "for_bundle",
    "gather",
    "grown",
    "growth_gated",
    "install_mode",
    "kubernetes_version",
    "plan",
    "readiness_gated",
    "render",
    "unready",
]


@dataclass(frozen=True, kw_only=True)
class Request:
    """What one ClusterExtension asks of the pipeline."""

    extension: str
    """The ClusterExtension's name (the unpack cache and the revisions are kept under it)."""
    spec: ExtensionSpec
    """The spec as operator-controller reads it (`ExtensionSpec.of`)."""
    installed: Installed | None = None
    """The bundle installed now: an upgrade moves only along its successors."""


@dataclass(frozen=True, kw_only=True)
class Sources:
    """Where the stages read and check: each caller's way into the cluster and the registries."""

    cluster_catalogs: Callable[[], Awaitable[Iterable[Mapping[str, Any]]]]
    """The ClusterCatalogs (operator-controller: its cache; olmctl: the API server)."""
    read_package: PackageReader
    """One package of a catalog version (operator-controller: catalogd's in-cluster URL; olmctl:
    the API server's service proxy)."""
    unpacker: BundleUnpacker
    client: Client
    """What the preflights read and ask with: CRDs, SubjectAccessReviews, the objects to apply."""
    certificates: CertificateProvider | None
    """Who makes the serving certificates of bundle webhooks; None refuses bundles with webhooks
    (upstream's WebhookProviderCertManager gate off)."""


class Refused(Exception):
    """A stage refused: `reason` and `message` are the ClusterExtension condition's; `detail` is
    what this implementation adds beside upstream's message (for the Event and `olmctl`)."""

    def __init__(self, reason: str, message: str, *, retry: bool, detail: str = "") -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.retry = retry
        self.detail = detail

    @property
    def explained(self) -> str:
        """The message with its detail, as the Event and the CLI say it."""
        return f"{self.message}; {self.detail}" if self.detail else self.message


class Unresolved(Refused):
    """No bundle satisfies the spec (`choose`); the detail says, catalog by catalog, why."""


class NoCatalogContent(Refused):
    """No selected catalog gave content for the package (`gathered` says what happened to each)."""

    def __init__(self, package: str, gathered: Gathered) -> None:
        super().__init__(api.REASON_RETRYING, f'package "{package}" not found in any catalog', retry=True)
        self.package = package
        self.gathered = gathered


def for_bundle(bundle: ResolvedBundle, message: str) -> str:
    """`message` about the resolved bundle, in operator-controller's wording."""
    return f'error for resolved bundle "{bundle.name}" with version "{bundle.version}": {message}'


def install_mode(watch_namespace: str | None, install_namespace: str) -> str:
    """The install mode a validated `watchNamespace` implies (None or "" watches all namespaces)."""
    if not watch_namespace:
        return ALL_NAMESPACES
    return OWN_NAMESPACE if watch_namespace == install_namespace else SINGLE_NAMESPACE


async def kubernetes_version(client: Client) -> semver.Version | None:
    """The cluster's Kubernetes version (`GET /version`), or None when the API server does not
    say: then no bundle is refused for it."""
    try:
        answer = orjson.loads(await client.transport.request("GET", "/version"))
        return cluster_version(str(answer["gitVersion"]))
    except (errors.APIError, errors.TransportError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return None


async def gather(sources: Sources, spec: ExtensionSpec) -> Gathered:
    """Stage 1: the catalogs the spec selects, and the package read from each."""
    if spec.catalog is None:  # the API's union rule makes this impossible; be explicit anyway
        raise Refused(api.REASON_BLOCKED, "spec.source.catalog is required", retry=False)
    return await gather_from(await sources.cluster_catalogs(), sources.read_package, spec.catalog)


@dataclass(frozen=True, kw_only=True)
class Held:
    """A step `spec.upgrade` keeps from applying: the bundle, and why in the condition's words."""

    bundle: ResolvedBundle
    reason: str
    """`ApprovalRequired`, `OutsidePolicy`, `PermissionGrowth`, `ClusterVersion` or `Readiness`."""
    message: str
    added_permissions: tuple[str, ...] = ()
    """With `PermissionGrowth`: the added permissions, one line per scope."""


@dataclass(frozen=True, kw_only=True)
class Updates:
    """What lies beyond the installed bundle."""

    available: Update | None
    """The newest bundle the installed one can reach, and the path there."""
    held: Held | None
    """The step the extension would take now, were `spec.upgrade` not holding it."""
    unreachable_approval: str | None
    """Why `spec.upgrade.approvedVersion` cannot be installed, when it cannot."""
    installed_unsupported: str | None = None
    """Why the installed bundle does not run on this cluster's Kubernetes version (it stays)."""
    no_graph: str | None = None
    """Why nothing can be available (a bundle image source has no catalog), for the status."""


@dataclass(frozen=True, kw_only=True)
class Choice:
    """What to install now, and what lies beyond the installed bundle."""

    resolution: Resolution | None
    """None: nothing `spec.upgrade` allows is in the catalogs; what is installed stays."""
    updates: Updates | None
    """None on a first install."""


def _held(spec: ExtensionSpec, installed: Installed, bundle: ResolvedBundle) -> Held:
    version = bundle.version
    approve = f"set spec.upgrade.approvedVersion to {version} to apply it"
    if spec.upgrade.automatic is AutomaticUpdates.NONE:
        message = f'bundle "{bundle.name}" ({version}) is waiting for approval: {approve}'
        return Held(bundle=bundle, reason=api.REASON_APPROVAL_REQUIRED, message=message)
    cls = update_class(semver.parse_version(installed.version), semver.parse_version(version))
    message = (
        f'bundle "{bundle.name}" ({version}) is a {cls} update from {installed.version} and '
        f"spec.upgrade.automatic is {spec.upgrade.automatic}: {approve}, or widen spec.upgrade.automatic"
    )
    return Held(bundle=bundle, reason=api.REASON_OUTSIDE_POLICY, message=message)


def _unreachable_approval(request: Request, gathered: Gathered, available: Update | None) -> str | None:
    approved = request.spec.upgrade.approved_version
    installed = request.installed
    if approved is None or installed is None or approved == installed.version:
        return None
    assert request.spec.catalog is not None
    target = semver.parse_version(approved)
    for catalog in gathered.contents:
        for name in reachable(request.spec.catalog, installed, catalog):
            bundle = next(b for b in catalog.content.bundles if b.name == name)
            if bundle.version is not None and semver.parse_version(bundle.version) == target:
                return None
    newest = f"; the newest reachable is {available.bundle.version}" if available is not None else ""
    return (
        f"spec.upgrade.approvedVersion {approved} cannot be installed from {installed.version}: no bundle "
        f"of that version is reachable within spec.source.catalog (version, channels, upgrade edges){newest}"
    )


def _catalog_bundle(gathered: Gathered, name: str, catalog: str | None = None) -> fbc.Bundle | None:
    for content in gathered.contents:
        if catalog is None or content.name == catalog:
            found = next((b for b in content.content.bundles if b.name == name), None)
            if found is not None:
                return found
    return None


def _cluster_gate(
    gathered: Gathered, available: Update | None, installed: Installed, cluster: semver.Version
) -> tuple[Held | None, str | None]:
    """The newest update when this cluster cannot run it, and why the installed bundle cannot run
    here (as its catalog entry says today), each when it applies."""
    held = None
    if available is not None:
        bundle = _catalog_bundle(gathered, available.bundle.name, available.bundle.catalog)
        why = unsupported(bundle, cluster) if bundle is not None else None
        if why is not None:
            held = Held(bundle=available.bundle, reason=api.REASON_CLUSTER_VERSION, message=why)
    bundle = _catalog_bundle(gathered, installed.name)
    why = unsupported(bundle, cluster) if bundle is not None else None
    staying = f"installed bundle {why}; it stays installed, nothing is removed" if why is not None else None
    return held, staying


def choose(request: Request, gathered: Gathered, *, cluster: semver.Version | None = None) -> Choice:
    """Stage 2: the bundle to install, as `spec.upgrade` and the cluster's Kubernetes version
    (`cluster`, None when unknown) allow, and what lies beyond the installed bundle; the message of
    a failure is upstream's, and its detail says, catalog by catalog, why nothing was found and what
    to change."""
    source = request.spec.catalog
    assert source is not None  # `gather` refused otherwise

    def resolved(accept: Callable[[semver.Version], bool] | None = None) -> Resolution:
        return resolve(
            source,
            request.installed,
            gathered.contents,
            skipped=gathered.skipped,
            not_selected=gathered.not_selected,
            accept=accept,
            cluster=cluster,
        )

    try:
        unrestricted = resolved()
    except ResolutionError as err:
        # Upstream's message first (tools match on it), then an outage that may be the cause: a
        # catalog whose content server could not be reached is retried, and the condition says why.
        outages = [s.error for s in gathered.skipped if s.why == UNREACHABLE and s.error]
        message = "; ".join([str(err), *outages])
        raise Unresolved(api.REASON_RETRYING, message, retry=True, detail=err.explanation) from None
    installed = request.installed
    if installed is None:
        return Choice(resolution=unrestricted, updates=None)
    accept = acceptance(request.spec.upgrade, source, installed, gathered.contents)
    chosen: Resolution | None = unrestricted
    if accept is not None:
        try:
            chosen = resolved(accept)
        except ResolutionError:
            chosen = None  # the installed bundle left the catalogs and nothing else is allowed
    held = None
    if unrestricted.bundle.name != (chosen.bundle.name if chosen is not None else installed.name):
        held = _held(request.spec, installed, unrestricted.bundle)
    available = newest_update(source, installed, gathered.contents)
    staying = None
    if cluster is not None:
        cluster_held, staying = _cluster_gate(gathered, available, installed, cluster)
        held = held or cluster_held
    updates = Updates(
        available=available,
        held=held,
        unreachable_approval=_unreachable_approval(request, gathered, available),
        installed_unsupported=staying,
    )
    return Choice(resolution=chosen, updates=updates)


async def fetch(unpacker: BundleUnpacker, request: Request, bundle: ResolvedBundle) -> Unpacked:
    """Stage 3: the bundle image pulled (cached by digest) and read as registry+v1."""
    try:
        return await unpacker.unpack(request.extension, bundle.image)
    except UnpackError as err:
        raise Refused(api.REASON_BLOCKED, for_bundle(bundle, str(err)), retry=False) from None
    except oci.RegistryError as err:
        message = for_bundle(bundle, f"pulling bundle image: {err}")
        raise Refused(api.REASON_RETRYING, message, retry=True) from None


async def fetch_image(
    unpacker: BundleUnpacker, request: Request, image: str
) -> tuple[ResolvedBundle, Unpacked]:
    """Stages 2 and 3 for a bundle image source (`spec.source.bundle`): `image` pulled and read as
    registry+v1, and the bundle it holds (package, name and version from its own metadata; no
    catalog and no upgrade graph)."""
    try:
        unpacked = await unpacker.unpack(request.extension, image)
    except UnpackError as err:
        message = f"bundle image {image} is not a registry+v1 bundle: {err}"
        raise Refused(api.REASON_BLOCKED, message, retry=False) from None
    except oci.RegistryError as err:
        raise Refused(api.REASON_RETRYING, f"pulling bundle image {image}: {err}", retry=True) from None
    csv = unpacked.bundle.csv
    try:
        semver.parse_version(csv.version)
    except semver.VersionError:
        message = (
            f"bundle image {image}: its ClusterServiceVersion {csv.name} has no semantic version "
            f"({csv.version!r})"
        )
        raise Refused(api.REASON_BLOCKED, message, retry=False) from None
    bundle = ResolvedBundle(
        package=unpacked.bundle.package_name,
        name=csv.name,
        version=csv.version,
        image=unpacked.image,
        catalog="",
    )
    return bundle, unpacked


def render(
    spec: ExtensionSpec,
    bundle: ResolvedBundle,
    registry_v1: RegistryV1,
    certificates: CertificateProvider | None,
) -> list[dict[str, Any]]:
    """Stage 4: the bundle's objects for the spec's namespace and `spec.config.inline`, with the
    OperatorCondition contract unless `spec.upgrade.readiness` is `None`."""
    try:
        return manifests_for(
            registry_v1,
            spec.namespace,
            spec.config,
            certificate_provider=certificates,
            operator_condition=spec.upgrade.operator_condition,
        )
    except InvalidConfigurationError as err:
        message = for_bundle(bundle, f"invalid ClusterExtension configuration: {err}")
        raise Refused(api.REASON_INVALID_CONFIGURATION, message, retry=False) from None
    except RenderError as err:
        raise Refused(api.REASON_BLOCKED, for_bundle(bundle, str(err)), retry=False) from None


MESSAGE_LINES = 20
"""Added permissions a condition message names; the rest are in `status.update.held`."""


def growth_gated(request: Request, bundle: ResolvedBundle) -> bool:
    """Whether moving to `bundle` passes the permission-growth gate at all: only updates do, only
    under `permissionGrowth: Hold`, and not when an `approvedVersion` at or beyond `bundle` approves
    the growth of every step up to it."""
    installed, upgrade = request.installed, request.spec.upgrade
    if (
        installed is None
        or bundle.name == installed.name
        or upgrade.permission_growth is PermissionGrowth.ALLOW
    ):
        return False
    approved = upgrade.approved_version
    return approved is None or semver.parse_version(approved) < semver.parse_version(bundle.version)


def grown(
    request: Request,
    bundle: ResolvedBundle,
    objects: Iterable[Mapping[str, Any]],
    installed_objects: Iterable[Mapping[str, Any]],
) -> Held | None:
    """Stage 4b, the permission-growth gate (roadmap F14): whether the update to `bundle` (rendered
    as `objects`) is held because its Roles and ClusterRoles grant what those of the installed
    revision (`installed_objects`) do not (`growth_gated` says which updates are gated)."""
    installed = request.installed
    if installed is None or not growth_gated(request, bundle):
        return None
    added = growth.added_permissions(objects, installed_objects)
    if not added:
        return None
    shown = "; ".join(added[:MESSAGE_LINES])
    more = f"; and {len(added) - MESSAGE_LINES} more" if len(added) > MESSAGE_LINES else ""
    message = (
        f'bundle "{bundle.name}" ({bundle.version}) grants {len(added)} permission(s) that '
        f'"{installed.name}" does not: {shown}{more}. Set spec.upgrade.approvedVersion to {bundle.version} '
        "to approve them, or spec.upgrade.permissionGrowth to Allow"
    )
    return Held(
        bundle=bundle, reason=api.REASON_PERMISSION_GROWTH, message=message, added_permissions=tuple(added)
    )


def readiness_gated(request: Request, bundle: ResolvedBundle) -> bool:
    """Whether moving to `bundle` asks the installed operator at all: only updates do, and only
    when `spec.upgrade.readiness` provides the contract."""
    installed = request.installed
    return installed is not None and bundle.name != installed.name and request.spec.upgrade.operator_condition


def unready(
    request: Request, bundle: ResolvedBundle, operator_condition: Mapping[str, Any] | None
) -> Held | None:
    """Stage 4c, update readiness (roadmap F25): whether the installed operator's OperatorCondition
    (None when it has none) holds the update to `bundle` (`readiness_gated` says which updates are
    asked); under `Ignore` the hold is returned too, for the caller to report and not obey."""
    installed = request.installed
    if installed is None or operator_condition is None or not readiness_gated(request, bundle):
        return None
    said = readiness.not_ready(operator_condition, installed.version, bundle.version)
    if said is None:
        return None
    metadata = operator_condition.get("metadata") or {}
    where = f"{metadata.get('namespace')}/{metadata.get('name')}"
    by = " (forced in its spec.overrides)" if said.overridden else ""
    message = (
        f'bundle "{bundle.name}" ({bundle.version}) waits for the installed operator: OperatorCondition '
        f"{where} says {said.type}=False{by}, reason {said.reason or 'none'}: "
        f"{said.message or '(no message)'}. "
        "The update applies once that condition is cleared; set it True in the object's spec.overrides, "
        "or spec.upgrade.readiness to Ignore, to force it"
    )
    return Held(bundle=bundle, reason=api.REASON_READINESS, message=message)


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What operator-controller would do for one ClusterExtension spec, and whether it could."""

    bundle: ResolvedBundle
    """The chosen bundle: package, name, version, image (as the catalog names it) and catalog."""
    deprecation: Deprecation
    image: str
    """The bundle image by digest, as pulled."""
    package_content: PackageContent
    """The package as the chosen catalog holds it (channels, bundles, deprecations)."""
    install_namespace: str
    watch_namespace: str | None
    """`spec.config.inline.watchNamespace` as the renderer reads it (None: the bundle's default)."""
    install_mode: str
    """`AllNamespaces`, `OwnNamespace` or `SingleNamespace`: what `watch_namespace` implies."""
    objects: list[dict[str, Any]]
    """The rendered objects, exactly as operator-controller would apply them, in its order."""
    crd_safety: CRDSafety | None
    """None when the caller asked for no preflights (as for all three below)."""
    permissions: Permissions | None
    """Also None when the spec names no ServiceAccount (operator-controller's default installer)."""
    collisions: Collisions | None
    revision: str | None = None
    """The ClusterObjectSet the rollout would create, whose finalizers the permission preflight
    checks; None without preflights, or when the caller may not list ClusterObjectSets."""


async def plan(
    request: Request, sources: Sources, *, gathered: Gathered | None = None, preflights: bool = True
) -> Plan:
    """Every stage in order for `request` (`gathered`: catalogs the caller already gathered for
    this spec; `preflights`: False when only the objects matter, as for `olmctl rbac`). Raises
    `Refused` from the first stage that refuses; the preflights never refuse, their verdicts are in
    the plan."""
    spec = request.spec
    if spec.bundle is not None:
        bundle, unpacked = await fetch_image(sources.unpacker, request, spec.bundle.ref)
        deprecation = Deprecation()
        package_content = PackageContent(name=bundle.package)  # no catalog: nothing is known of it
    else:
        if gathered is None:
            gathered = await gather(sources, spec)
        if not gathered.contents or all(c.content.empty for c in gathered.contents):
            assert spec.catalog is not None
            raise NoCatalogContent(spec.catalog.package_name, gathered)
        resolution = choose(request, gathered, cluster=await kubernetes_version(sources.client)).resolution
        if resolution is None:
            assert request.installed is not None
            message = (
                f"{request.installed.name} stays installed: spec.upgrade allows no bundle the catalogs offer"
            )
            raise Refused(api.REASON_RETRYING, message, retry=True)
        bundle, deprecation = resolution.bundle, resolution.deprecation
        package_content = next(c.content for c in gathered.contents if c.name == bundle.catalog)
        unpacked = await fetch(sources.unpacker, request, bundle)
    objects = render(spec, bundle, unpacked.bundle, sources.certificates)
    watch = parse_config(unpacked.bundle.csv, spec.config, spec.namespace).watch_namespace
    client = sources.client
    crd_safety = permissions = collisions = revision = None
    if preflights:
        crd_safety = await check_crd_safety(client, objects)
        revision = await next_revision(client, request.extension)
        if spec.service_account is not None:  # else the default installer, which olmctl cannot see
            permissions = await check_permissions(
                client,
                namespace=spec.namespace,
                service_account=spec.service_account,
                objects=objects,
                revision=revision,
            )
        collisions = await check_collisions(
            client, extension=request.extension, package=bundle.package, objects=objects
        )
    return Plan(
        bundle=bundle,
        deprecation=deprecation,
        image=unpacked.image,
        package_content=package_content,
        install_namespace=spec.namespace,
        watch_namespace=watch,
        install_mode=install_mode(watch, spec.namespace),
        objects=objects,
        crd_safety=crd_safety,
        permissions=permissions,
        collisions=collisions,
        revision=revision,
    )
