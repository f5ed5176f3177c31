"""What installing a package would do: the bundle operator-controller would choose and the objects it
would apply, computed from outside the cluster with operator-controller's own code.

`plan_install` runs the first stages of operator-controller's install pipeline (see
`olm.operator_controller.clusterextension.steps`) in the same order and with the same arguments:
catalogs gathered by the extension's selector (`catalogs.gathering`), the package read from each
(here through `olm.cli.content`, which reaches catalogd from outside the cluster), `resolve`, the
bundle image pulled and read with operator-controller's unpacker, and `render.manifests_for` with the
extension's namespace and `spec.config.inline`. Nothing is written to the cluster.

Bundle images are pulled from the user's machine: `--registry-ca` adds trusted CAs, blobs and
unpacked bundles are kept under `--cache-dir` (default `$XDG_CACHE_HOME/olmctl`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from olm import oci, semver
from olm.api.clusterextension import CatalogFilter
from olm.api.extensionspec import CatalogSource, UpgradeConstraintPolicy
from olm.api.kinds import CLUSTER_CATALOG
from olm.cli.commands import CommandFailed, Session
from olm.cli.content import read_catalog
from olm.operator_controller.catalogs import CatalogClientError, CatalogRef, PackageContent
from olm.operator_controller.catalogs.gathering import Gathered, gather_from
from olm.operator_controller.render import CertManagerProvider, RenderError, manifests_for, parse_config
from olm.operator_controller.resolve import Deprecation, Installed, ResolutionError, ResolvedBundle, resolve
from olm.operator_controller.unpack import ALL_NAMESPACES, OWN_NAMESPACE, SINGLE_NAMESPACE
from olm.operator_controller.unpack.unpacker import BundleUnpacker, UnpackError

__all__ = [
    "CatalogReads",
    "Plan",
    "PullOptions",
    "ResolutionFailed",
    "add_pull_flags",
    "catalog_filter",
    "install_mode",
    "plan_install",
    "pull_options",
]


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "olmctl"


@dataclass(frozen=True, kw_only=True)
class PullOptions:
    """How olmctl pulls bundle images: extra trusted CAs and where blobs and bundles are cached."""

    ca_files: tuple[Path, ...] = ()
    cache_dir: Path = field(default_factory=_default_cache_dir)


def add_pull_flags(parser: argparse.ArgumentParser) -> None:
    """`--registry-ca` and `--cache-dir`, for commands that read bundles (read back with
    `pull_options(args)`)."""
    group = parser.add_argument_group("bundle images")
    group.add_argument(
        "--registry-ca",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="CA bundle trusted for the bundle images' registry, besides the system store (repeatable)",
    )
    group.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where pulled bundle images are kept (default: $XDG_CACHE_HOME/olmctl)",
    )


def pull_options(args: argparse.Namespace) -> PullOptions:
    cache_dir: Path | None = args.cache_dir
    ca_files = tuple(args.registry_ca)
    for ca_file in ca_files:
        if not ca_file.is_file():
            raise CommandFailed(f"--registry-ca {ca_file}: no such file")
    return (
        PullOptions(ca_files=ca_files)
        if cache_dir is None
        else PullOptions(ca_files=ca_files, cache_dir=cache_dir)
    )


CatalogReads = dict[CatalogRef, dict[str, PackageContent]]
"""Catalog versions already read, by ref: a command that plans several times (`rbac` per
`--version`, `upgrade` when it retries as SelfCertified) reads each catalog once."""


@dataclass(frozen=True, kw_only=True)
class Plan:
    """What operator-controller would install for one ClusterExtension spec."""

    bundle: ResolvedBundle
    """The chosen bundle: package, name, version, image (as the catalog names it) and catalog."""
    deprecation: Deprecation
    install_namespace: str
    watch_namespace: str | None
    """`spec.config.inline.watchNamespace` as operator-controller reads it (None: the bundle's default)."""
    install_mode: str
    """`AllNamespaces`, `OwnNamespace` or `SingleNamespace`: what `watch_namespace` implies."""
    objects: list[dict[str, Any]]
    """The rendered objects, exactly as operator-controller would apply them, in its order."""
    image: str
    """The bundle image by digest, as pulled."""
    package_content: PackageContent
    """The package as the chosen catalog holds it (channels, bundles, deprecations)."""


def catalog_filter(
    package: str,
    *,
    version: str | None = None,
    channels: Sequence[str] = (),
    catalog_selector: dict[str, Any] | None = None,
    upgrade_constraint_policy: str = UpgradeConstraintPolicy.CATALOG_PROVIDED,
) -> CatalogSource:
    """`spec.source.catalog` for these arguments, as operator-controller reads it from a
    ClusterExtension. The fields are checked as the API would check them (the model the CRD is
    generated from), and a version range the resolver would refuse fails here, before any catalog
    is read."""
    if version:
        try:
            semver.parse_range(version)
        except semver.RangeError as err:
            raise CommandFailed(f'invalid version range "{version}": {err}') from None
    data: dict[str, Any] = {"packageName": package, "upgradeConstraintPolicy": upgrade_constraint_policy}
    if version:
        data["version"] = version
    if channels:
        data["channels"] = list(channels)
    if catalog_selector:
        data["selector"] = catalog_selector
    try:
        CatalogFilter.model_validate(data)
    except pydantic.ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CommandFailed(f"invalid {where}: {first['msg']}") from None
    return CatalogSource.parse(data)


def install_mode(watch_namespace: str | None, install_namespace: str) -> str:
    """The install mode a validated `watchNamespace` implies (None or "" watches all namespaces)."""
    if not watch_namespace:
        return ALL_NAMESPACES
    return OWN_NAMESPACE if watch_namespace == install_namespace else SINGLE_NAMESPACE


async def plan_install(
    session: Session,
    *,
    package: str,
    namespace: str,
    version: str | None = None,
    channels: Sequence[str] = (),
    catalog_selector: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    installed: Installed | None = None,
    extension_name: str | None = None,
    upgrade_constraint_policy: str = UpgradeConstraintPolicy.CATALOG_PROVIDED,
    pull: PullOptions | None = None,
    read: CatalogReads | None = None,
) -> Plan:
    """Resolve, unpack and render as operator-controller would for a ClusterExtension with these
    fields (`installed`: the bundle installed now, for upgrades; `read`: catalogs read by earlier
    plans of the same command). Every failure a user can act on raises `CommandFailed` with
    operator-controller's wording where it has one."""
    source = catalog_filter(
        package,
        version=version,
        channels=channels,
        catalog_selector=catalog_selector,
        upgrade_constraint_policy=upgrade_constraint_policy,
    )
    gathered = await _gather(session, source, {} if read is None else read)
    try:
        resolution = resolve(
            source,
            installed,
            gathered.contents,
            skipped=gathered.skipped,
            not_selected=gathered.not_selected,
        )
    except ResolutionError as err:
        raise ResolutionFailed(str(err)) from None
    bundle = resolution.bundle
    pull = pull or PullOptions()
    registry_options = oci.ClientOptions(
        cache_dir=pull.cache_dir / "blobs", ca_files=pull.ca_files, user_agent="olmctl"
    )
    where = f'bundle "{bundle.name}" version "{bundle.version}"'
    try:
        async with oci.RegistryClient(registry_options) as registry:
            unpacker = BundleUnpacker(registry, pull.cache_dir / "unpack")
            unpacked = await unpacker.unpack(extension_name or package, bundle.image)
    except UnpackError as err:
        raise CommandFailed(f"{where}: {err}") from None
    except oci.RegistryError as err:
        raise CommandFailed(f"{where}: pulling bundle image {bundle.image}: {err}") from None
    try:
        objects = manifests_for(
            unpacked.bundle, namespace, config, certificate_provider=CertManagerProvider()
        )
        watch = parse_config(unpacked.bundle.csv, config, namespace).watch_namespace
    except RenderError as err:
        raise CommandFailed(f"{where}: {err}") from None
    return Plan(
        bundle=bundle,
        deprecation=resolution.deprecation,
        install_namespace=namespace,
        watch_namespace=watch,
        install_mode=install_mode(watch, namespace),
        objects=objects,
        image=unpacked.image,
        package_content=next(c.content for c in gathered.contents if c.name == bundle.catalog),
    )


class ResolutionFailed(CommandFailed):
    """No bundle satisfies the request; the message is operator-controller's."""


async def _gather(session: Session, source: CatalogSource, read: CatalogReads) -> Gathered:
    """The selected catalogs' content for the package, or a one-line reason why there is none."""
    catalogs = [dict(c) for c in (await session.client.list(CLUSTER_CATALOG)).items]
    failures: dict[str, str] = {}

    async def read_package(ref: CatalogRef, package: str) -> PackageContent:
        if ref not in read:
            try:
                read[ref] = await read_catalog(session.source, ref)
            except CatalogClientError as err:
                failures[ref.name] = err.message  # the condition wording drops the detail; a CLI shows it
                raise
        return read[ref].get(package) or PackageContent(name=package)

    gathered = await gather_from(catalogs, read_package, source)
    package = source.package_name
    if gathered.selected == 0:
        if gathered.not_selected:
            considered = ", ".join(gathered.not_selected)
            raise CommandFailed(f"no ClusterCatalog matches the catalog selector (catalogs: {considered})")
        raise CommandFailed("no ClusterCatalog exists; add one with `olmctl catalog add`")
    if not gathered.contents:
        reasons = [f"{s.name}: {failures.get(s.name, s.why)}" for s in gathered.skipped]
        raise CommandFailed(f"no selected catalog could be read: {'; '.join(reasons)}")
    if all(c.content.empty for c in gathered.contents):
        names = ", ".join(sorted(c.name for c in gathered.contents))
        raise CommandFailed(f"package {package!r} not found in catalogs {names}")
    return gathered
