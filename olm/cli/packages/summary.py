"""What the CLI says about catalogs and packages, computed from typed catalog content (pure logic).

A package's human-facing text (display name, description, keywords, install modes) lives in its
bundles' CSV, which catalogs carry either as an `olm.csv.metadata` property (newer catalogs) or as
the whole CSV in an `olm.bundle.object` property (older ones); both are read, the first wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from olm import fbc, semver
from olm.pipeline.catalogs import PackageContent

__all__ = [
    "ChannelSummary",
    "PackageSummary",
    "VersionRow",
    "csv_metadata",
    "deprecations",
    "latest_bundle",
    "matches",
    "summarize",
    "versions_of",
]

PROPERTY_CSV_METADATA = "olm.csv.metadata"
PROPERTY_GVK = "olm.gvk"


def csv_metadata(bundle: fbc.Bundle) -> dict[str, Any]:
    """The bundle's CSV metadata (`displayName`, `description`, `keywords`, `installModes`, ...)."""
    for value in bundle.properties_of(PROPERTY_CSV_METADATA):
        if isinstance(value, dict):
            return value
    csv = bundle.embedded_csv()
    spec = csv.get("spec") if csv is not None else None
    if not isinstance(spec, dict):
        return {}
    return {k: spec[k] for k in ("displayName", "description", "keywords", "installModes") if k in spec}


def _version(bundle: fbc.Bundle) -> semver.Version | None:
    text = bundle.version
    if text is None:
        return None
    try:
        return semver.parse_version(text)
    except semver.VersionError:
        return None


def latest_bundle(bundles: Iterable[fbc.Bundle]) -> fbc.Bundle | None:
    """The bundle with the highest version (bundles without a readable version never win)."""
    best: tuple[semver.Version, fbc.Bundle] | None = None
    for bundle in bundles:
        version = _version(bundle)
        if version is not None and (best is None or best[0] < version):
            best = (version, bundle)
    return best[1] if best else None


def deprecations(content: PackageContent) -> tuple[str, dict[str, str], dict[str, str]]:
    """Messages for the package, per channel and per bundle (empty when not deprecated)."""
    package, channels, bundles = "", {}, {}
    for entry in content.deprecations.entries if content.deprecations else ():
        ref = entry.reference
        if ref.schema_ == fbc.SCHEMA_PACKAGE:
            package = entry.message
        elif ref.schema_ == fbc.SCHEMA_CHANNEL:
            channels[ref.name] = entry.message
        else:
            bundles[ref.name] = entry.message
    return package, channels, bundles


@dataclass(frozen=True, kw_only=True)
class VersionRow:
    """One entry of a channel, as `package versions` lists it."""

    version: str
    bundle: str
    replaces: str
    skips: tuple[str, ...]
    skip_range: str
    deprecated: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "bundle": self.bundle,
            "replaces": self.replaces,
            "skips": list(self.skips),
            "skipRange": self.skip_range,
            "deprecated": self.deprecated,
        }


def versions_of(content: PackageContent, channel: str) -> list[VersionRow] | None:
    """The entries of `channel`, highest version first; None when the package has no such channel."""
    found = next((c for c in content.channels if c.name == channel), None)
    if found is None:
        return None
    bundles = {b.name: b for b in content.bundles}
    _, _, deprecated = deprecations(content)
    keyed: list[tuple[semver.Version | None, VersionRow]] = []
    for entry in found.entries:
        bundle = bundles.get(entry.name)
        version = _version(bundle) if bundle is not None else None
        row = VersionRow(
            version=(bundle.version if bundle is not None else None) or "",
            bundle=entry.name,
            replaces=entry.replaces,
            skips=entry.skips,
            skip_range=entry.skip_range,
            deprecated=deprecated.get(entry.name, ""),
        )
        keyed.append((version, row))
    with_version = sorted(((v, r) for v, r in keyed if v is not None), key=lambda item: item[0], reverse=True)
    return [r for _, r in with_version] + [r for v, r in keyed if v is None]


@dataclass(frozen=True, kw_only=True)
class ChannelSummary:
    name: str
    versions: tuple[str, ...]
    """Highest first."""
    deprecated: str
    deprecated_versions: tuple[str, ...] = ()
    """The versions whose bundles are deprecated."""


@dataclass(frozen=True, kw_only=True)
class PackageSummary:
    """Everything `package show` and `search` say about one package in one catalog."""

    catalog: str
    package: str
    display_name: str
    description: str
    keywords: tuple[str, ...]
    default_channel: str
    latest_version: str
    latest_bundle: str
    channels: tuple[ChannelSummary, ...]
    deprecated: str
    deprecated_bundles: Mapping[str, str]
    install_modes: tuple[tuple[str, bool], ...]
    provided_apis: tuple[tuple[str, str, str], ...]
    """(group, version, kind) of the latest bundle's `olm.gvk` properties."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "catalog": self.catalog,
            "package": self.package,
            "displayName": self.display_name,
            "description": self.description,
            "keywords": list(self.keywords),
            "defaultChannel": self.default_channel,
            "latestVersion": self.latest_version,
            "latestBundle": self.latest_bundle,
            "deprecated": self.deprecated,
            "channels": [
                {
                    "name": c.name,
                    "versions": list(c.versions),
                    "deprecated": c.deprecated,
                    "deprecatedVersions": list(c.deprecated_versions),
                }
                for c in self.channels
            ],
            "deprecatedBundles": dict(self.deprecated_bundles),
            "installModes": [{"type": t, "supported": s} for t, s in self.install_modes],
            "providedAPIs": [{"group": g, "version": v, "kind": k} for g, v, k in self.provided_apis],
        }


def summarize(catalog: str, content: PackageContent) -> PackageSummary:
    """The summary of one package's content in `catalog`."""
    latest = latest_bundle(content.bundles)
    metadata = csv_metadata(latest) if latest is not None else {}
    package_deprecated, channel_deprecated, bundle_deprecated = deprecations(content)
    channels = []
    for channel in sorted(content.channels, key=lambda c: c.name):
        rows = versions_of(content, channel.name) or []
        channels.append(
            ChannelSummary(
                name=channel.name,
                versions=tuple(r.version or r.bundle for r in rows),
                deprecated=channel_deprecated.get(channel.name, ""),
                deprecated_versions=tuple(r.version or r.bundle for r in rows if r.deprecated),
            )
        )
    modes = tuple(
        (str(m.get("type", "")), bool(m.get("supported")))
        for m in metadata.get("installModes") or ()
        if isinstance(m, dict)
    )
    apis = tuple(
        (str(v.get("group", "")), str(v.get("version", "")), str(v.get("kind", "")))
        for v in (latest.properties_of(PROPERTY_GVK) if latest is not None else ())
        if isinstance(v, dict)
    )
    description = str(metadata.get("description") or "") or (
        content.package.description if content.package else ""
    )
    keywords = metadata.get("keywords") or ()
    return PackageSummary(
        catalog=catalog,
        package=content.name,
        display_name=str(metadata.get("displayName") or ""),
        description=description,
        keywords=tuple(str(k) for k in keywords if isinstance(k, str)),
        default_channel=content.package.default_channel if content.package else "",
        latest_version=(latest.version or "") if latest is not None else "",
        latest_bundle=latest.name if latest is not None else "",
        channels=tuple(channels),
        deprecated=package_deprecated,
        deprecated_bundles=bundle_deprecated,
        install_modes=modes,
        provided_apis=apis,
    )


def matches(summary: PackageSummary, text: str) -> bool:
    """Whether `text` occurs (case-insensitively) in the package's name, display name, description
    or keywords."""
    needle = text.casefold()
    fields = (summary.package, summary.display_name, summary.description, *summary.keywords)
    return any(needle in field.casefold() for field in fields)
