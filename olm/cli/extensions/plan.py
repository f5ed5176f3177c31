"""What installing or upgrading a package would do, computed from outside the cluster with the install
pipeline operator-controller runs (`olm.pipeline.plan`).

`plan_install` composes the ClusterExtension the command stands for (`extension_object`), checks its
catalog fields as the API would, reads its spec as operator-controller does (`ExtensionSpec.of`) and
calls `olm.pipeline.plan.plan` with olmctl's ways in: the ClusterCatalogs from the API server, their
content through `olm.cli.catalogs.content` (which reaches catalogd from outside the cluster), and
bundle images pulled from the user's machine. The plan holds the bundle, the objects and the
preflight verdicts; nothing is written to the cluster. A refusal is operator-controller's message,
with olmctl's advice where a flag fixes it (`watchnamespace`).

Bundle images are pulled from the user's machine: `--registry-ca` adds trusted CAs, blobs and
unpacked bundles are kept under `--cache-dir` (default `$XDG_CACHE_HOME/olmctl`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic

from olm import oci, semver
from olm.api.clusterextension import BundleImageSource, CatalogFilter
from olm.api.extensionspec import ExtensionSpec, Readiness, SpecError, UpgradeConstraintPolicy
from olm.api.kinds import CLUSTER_CATALOG, CLUSTER_EXTENSION
from olm.cli.catalogs.content import CatalogPackages, read_catalog
from olm.cli.commands import CommandFailed
from olm.cli.extensions import watchnamespace
from olm.cli.session import Session
from olm.pipeline import plan
from olm.pipeline.catalogs import CatalogClientError, CatalogRef, PackageContent
from olm.pipeline.catalogs.gathering import Gathered
from olm.pipeline.render import CertManagerProvider
from olm.pipeline.resolve import Installed
from olm.pipeline.unpack import BundleUnpacker

__all__ = [
    "CatalogReads",
    "PullOptions",
    "ResolutionFailed",
    "check_catalog_fields",
    "extension_object",
    "plan_install",
    "pull_options",
    "refusal_message",
]


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "olmctl"


@dataclass(frozen=True, kw_only=True)
class PullOptions:
    """How olmctl pulls bundle images: extra trusted CAs and where blobs and bundles are cached."""

    ca_files: tuple[Path, ...] = ()
    cache_dir: Path = field(default_factory=_default_cache_dir)


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


CatalogReads = dict[CatalogRef, CatalogPackages]
"""Catalog versions already read, by ref: a command that plans several times (`rbac` per
`--version`, `upgrade` when it retries as SelfCertified) reads each catalog once."""


def extension_object(
    name: str,
    package: str,
    *,
    namespace: str,
    service_account: str,
    version: str | None = None,
    channels: Sequence[str] = (),
    selector: dict[str, Any] | None = None,
    config: dict[str, Any] | None = None,
    upgrade_constraint_policy: str | None = None,
    readiness: str | None = None,
    bundle_image: str | None = None,
    poll_interval: int | None = None,
) -> dict[str, Any]:
    """The ClusterExtension these arguments stand for (the one `install` creates); with
    `bundle_image`, the source is that image instead of `package` from the catalogs."""
    catalog: dict[str, Any] = {"packageName": package}
    if version:
        catalog["version"] = version
    if channels:
        catalog["channels"] = list(channels)
    if selector:
        catalog["selector"] = selector
    if upgrade_constraint_policy and upgrade_constraint_policy != UpgradeConstraintPolicy.CATALOG_PROVIDED:
        catalog["upgradeConstraintPolicy"] = str(upgrade_constraint_policy)
    spec: dict[str, Any] = {
        "namespace": namespace,
        "serviceAccount": {"name": service_account},
        "source": {"sourceType": "Catalog", "catalog": catalog},
    }
    if config:
        spec["config"] = {"configType": "Inline", "inline": config}
    if readiness and readiness != Readiness.NONE:
        spec["upgrade"] = {"readiness": str(readiness)}
    if bundle_image is not None:
        bundle: dict[str, Any] = {"ref": bundle_image}
        if poll_interval is not None:
            bundle["pollIntervalMinutes"] = poll_interval
        spec["source"] = {"sourceType": "Bundle", "bundle": bundle}
    return {
        "apiVersion": CLUSTER_EXTENSION.api_version,
        "kind": CLUSTER_EXTENSION.kind,
        "metadata": {"name": name},
        "spec": spec,
    }


def check_bundle_fields(bundle: dict[str, Any]) -> None:
    """`spec.source.bundle` checked as the API would check it (its model and CEL rule)."""
    try:
        BundleImageSource.model_validate(bundle)
    except pydantic.ValidationError as err:
        problem = err.errors()[0]
        raise CommandFailed(f"invalid bundle image {bundle.get('ref')!r}: {problem['msg']}") from None
    if "@" in str(bundle.get("ref")) and bundle.get("pollIntervalMinutes") is not None:
        raise CommandFailed("--poll-interval needs a tag: a digest reference never changes")


def check_catalog_fields(catalog: dict[str, Any]) -> None:
    """`spec.source.catalog` checked as the API would check it (the model the CRD is generated
    from), and a version range the resolver would refuse refused here, before any catalog is read."""
    version = catalog.get("version")
    if version:
        try:
            semver.parse_range(version)
        except semver.RangeError as err:
            raise CommandFailed(f'invalid version range "{version}": {err}') from None
    try:
        CatalogFilter.model_validate(catalog)
    except pydantic.ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CommandFailed(f"invalid {where}: {first['msg']}") from None


class ResolutionFailed(CommandFailed):
    """No bundle satisfies the request; the message is operator-controller's."""


async def plan_install(
    session: Session,
    extension: dict[str, Any],
    *,
    installed: Installed | None = None,
    pull: PullOptions | None = None,
    read: CatalogReads | None = None,
    preflights: bool = True,
    watch_namespace_flag: bool = True,
) -> plan.Plan:
    """Plan the ClusterExtension `extension` as operator-controller would (`installed`: the bundle
    installed now, for upgrades; `read`: catalogs read by earlier plans of the same command;
    `preflights`: run the preflight verdicts too; `watch_namespace_flag`: the command takes
    `--watch-namespace`, which its advice then names). Every failure a user can act on raises
    `CommandFailed` with operator-controller's wording where it has one."""
    source = extension["spec"]["source"]
    if "catalog" in source:
        check_catalog_fields(source["catalog"])
    else:
        check_bundle_fields(source["bundle"])
    try:
        spec = ExtensionSpec.of(extension)
    except SpecError as err:
        raise CommandFailed(f"invalid {err}") from None
    reads = {} if read is None else read
    failures: dict[str, str] = {}

    async def read_package(ref: CatalogRef, package: str) -> PackageContent:
        if ref not in reads:
            try:
                reads[ref] = await read_catalog(session.source, ref)
            except CatalogClientError as err:
                failures[ref.name] = err.message  # the condition wording drops the detail; a CLI shows it
                raise
        malformed = reads[ref].malformed.get(package)
        if malformed is not None:  # as operator-controller: this catalog is skipped for this package
            failures[ref.name] = malformed.message
            raise malformed
        return reads[ref].get(package) or PackageContent(name=package)

    async def cluster_catalogs() -> list[dict[str, Any]]:
        return [dict(c) for c in (await session.client.list(CLUSTER_CATALOG)).items]

    pull = pull or PullOptions()
    registry_options = oci.ClientOptions(
        cache_dir=pull.cache_dir / "blobs", ca_files=pull.ca_files, user_agent="olmctl"
    )
    request = plan.Request(extension=extension["metadata"]["name"], spec=spec, installed=installed)
    try:
        async with oci.RegistryClient(registry_options) as registry:
            sources = plan.Sources(
                cluster_catalogs=cluster_catalogs,
                read_package=read_package,
                unpacker=BundleUnpacker(registry, pull.cache_dir / "unpack"),
                client=session.client,
                certificates=CertManagerProvider(),
            )
            return await plan.plan(request, sources, preflights=preflights)
    except plan.NoCatalogContent as none:
        raise CommandFailed(_no_content(none.package, none.gathered, failures)) from None
    except plan.Unresolved as unresolved:
        raise ResolutionFailed(unresolved.explained) from None
    except plan.Refused as refused:
        raise CommandFailed(refusal_message(refused, extension, reads, flag=watch_namespace_flag)) from None


def refusal_message(
    refused: plan.Refused, extension: Mapping[str, Any], reads: CatalogReads, *, flag: bool
) -> str:
    """What `CommandFailed` says of a refused plan of `extension`: operator-controller's message, and
    what to pass when it is a missing `watchNamespace` (`flag`: the command takes `--watch-namespace`)."""
    spec = extension["spec"]
    inline = (spec.get("config") or {}).get("inline") or {}
    advice = watchnamespace.advice(
        refused.reason,
        refused.message,
        given=inline.get("watchNamespace"),
        install_namespace=spec["namespace"],
        packages=[content for packages in reads.values() for content in packages.values()],
        flag=flag,
    )
    return refused.message if advice is None else f"{refused.message}; {advice}"


def _no_content(package: str, gathered: Gathered, failures: dict[str, str]) -> str:
    """Why the selected catalogs gave nothing for `package`, for people at a terminal."""
    if gathered.selected == 0:
        if gathered.not_selected:
            considered = ", ".join(gathered.not_selected)
            return f"no ClusterCatalog matches the catalog selector (catalogs: {considered})"
        return "no ClusterCatalog exists; add one with `olmctl catalog add`"
    if not gathered.contents:
        reasons = [f"{s.name}: {failures.get(s.name, s.why)}" for s in gathered.skipped]
        return f"no selected catalog could be read: {'; '.join(reasons)}"
    names = ", ".join(sorted(c.name for c in gathered.contents))
    return f"package {package!r} not found in catalogs {names}"
