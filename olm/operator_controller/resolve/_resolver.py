"""The resolver: one package, the selected catalogs' content, the installed bundle -> one bundle."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from olm import fbc, semver
from olm.api.clusterextension import CatalogFilter, UpgradeConstraintPolicy
from olm.operator_controller.catalogs.gathering import CatalogContent
from olm.operator_controller.resolve._errors import (
    AmbiguousCatalogs,
    InvalidVersionRange,
    NoBundlesFound,
    ResolutionError,
    UnsupportedDependency,
    describe,
)

__all__ = [
    "UNSUPPORTED_DEPENDENCY_PROPERTIES",
    "CatalogContent",
    "Deprecation",
    "Installed",
    "Resolution",
    "ResolvedBundle",
    "resolve",
]

UNSUPPORTED_DEPENDENCY_PROPERTIES = ("olm.package.required", "olm.gvk.required", "olm.constraint")
"""Bundle properties declaring dependencies; a bundle carrying one is refused."""


@dataclass(frozen=True, kw_only=True)
class Installed:
    """The bundle currently installed (from the extension's status or its active revision)."""

    name: str
    version: str


@dataclass(frozen=True, kw_only=True)
class ResolvedBundle:
    """The chosen bundle and where it comes from."""

    package: str
    name: str
    version: str
    image: str
    catalog: str


@dataclass(frozen=True, kw_only=True)
class Deprecation:
    """Deprecation notices that apply to the chosen bundle (for the `*Deprecated` conditions)."""

    package: str | None = None
    """Message of the package's deprecation, if deprecated."""
    channels: tuple[tuple[str, str], ...] = ()
    """(channel, message) for each deprecated channel that was considered and holds the bundle."""
    bundle: str | None = None
    """Message of the bundle's deprecation, if deprecated."""

    @property
    def deprecated(self) -> bool:
        """Whether anything applies."""
        return self.package is not None or bool(self.channels) or self.bundle is not None


@dataclass(frozen=True, kw_only=True)
class Resolution:
    """What to install, and what the status should say about it."""

    bundle: ResolvedBundle
    deprecation: Deprecation = field(default_factory=Deprecation)
    skipped: tuple[str, ...] = ()
    """Catalogs that were selected but not serving, as passed in (sorted)."""


@dataclass(frozen=True)
class _Candidate:
    catalog: CatalogContent
    bundle: fbc.Bundle
    version: semver.Version
    deprecated: bool


def resolve(
    source: CatalogFilter,
    installed: Installed | None,
    catalogs: Sequence[CatalogContent],
    *,
    skipped: Sequence[str] = (),
) -> Resolution:
    """Choose the bundle to install for `source` (selector already applied: `catalogs` are the
    selected, serving ones) given what is `installed`.

    Within a catalog: bundles of the package in the requested channels (if any), within the version
    range (if any), and, unless `upgradeConstraintPolicy: SelfCertified`, successors of the
    installed bundle (replaces, skips, skipRange of an entry in a considered channel) or the
    installed version itself. Non-deprecated before deprecated, then highest version. Across
    catalogs: deprecated candidates drop out when a non-deprecated one exists, the highest priority
    wins, and a tie is an `AmbiguousCatalogs` error. `skipped` names selected catalogs that were
    not serving; they appear in error messages. Because successor filtering never depends on which
    catalogs are present, a missing catalog can make resolution fail but never choose a
    non-successor. Raises a `ResolutionError` subclass.
    """
    package = source.package_name
    channels = tuple(source.channels or ())
    range_text = source.version or ""
    version_range = _parse_range(range_text)
    installed_version = _parse_installed(installed)
    follow_edges = installed is not None and (
        source.upgrade_constraint_policy is not UpgradeConstraintPolicy.SELF_CERTIFIED
    )
    candidates: list[_Candidate] = []
    for catalog in catalogs:
        best = _best_in(
            catalog,
            channels=channels,
            version_range=version_range,
            installed=installed if follow_edges else None,
            installed_version=installed_version,
        )
        if best is not None:
            candidates.append(best)
    message = functools.partial(
        describe,
        package=package,
        version_range=range_text,
        channels=channels,
        installed_version=installed.version if installed is not None else None,
    )
    if not candidates:
        raise NoBundlesFound(_with_skipped(message(), skipped))
    if any(not c.deprecated for c in candidates):
        candidates = [c for c in candidates if not c.deprecated]
    candidates.sort(key=lambda c: (-c.catalog.priority, c.catalog.name))
    top = candidates[0].catalog.priority
    tied = [c.catalog.name for c in candidates if c.catalog.priority == top]
    if len(tied) > 1:
        text = message(found=True, catalogs=tied)
        raise AmbiguousCatalogs(_with_skipped(text, skipped), tied)
    winner = candidates[0]
    for prop in winner.bundle.properties:
        if prop.type in UNSUPPORTED_DEPENDENCY_PROPERTIES:
            raise UnsupportedDependency(winner.bundle.name, prop.type)
    return Resolution(
        bundle=ResolvedBundle(
            package=package,
            name=winner.bundle.name,
            version=str(winner.bundle.version),
            image=winner.bundle.image,
            catalog=winner.catalog.name,
        ),
        deprecation=_deprecation(winner, channels),
        skipped=tuple(sorted(skipped)),
    )


def _parse_range(text: str) -> semver.Range | None:
    if not text:
        return None
    try:
        return semver.parse_range(text)
    except semver.RangeError as err:
        raise InvalidVersionRange(f'invalid version range "{text}": {err}') from None


def _parse_installed(installed: Installed | None) -> semver.Version | None:
    if installed is None:
        return None
    try:
        return semver.parse_version(installed.version)
    except semver.VersionError as err:
        raise ResolutionError(f'installed bundle "{installed.name}" has an invalid version: {err}') from None


def _best_in(
    catalog: CatalogContent,
    *,
    channels: tuple[str, ...],
    version_range: semver.Range | None,
    installed: Installed | None,
    installed_version: semver.Version | None,
) -> _Candidate | None:
    content = catalog.content
    considered = [c for c in content.channels if not channels or c.name in channels]
    in_channels = {entry.name for channel in considered for entry in channel.entries}
    deprecated_bundles = _deprecated_bundles(content.deprecations)
    found: list[_Candidate] = []
    for bundle in content.bundles:
        if bundle.package != content.name:
            continue
        if channels and bundle.name not in in_channels:
            continue
        version = _version(bundle)
        if version is None:
            continue  # a bundle without a valid version can neither be ranged nor ordered
        if version_range is not None and not version_range.matches(version):
            continue
        if (
            installed is not None
            and installed_version is not None
            and version != installed_version
            and not _is_successor(bundle.name, installed, installed_version, considered)
        ):
            continue
        found.append(_Candidate(catalog, bundle, version, bundle.name in deprecated_bundles))
    if not found:
        return None
    return min(found, key=lambda c: (c.deprecated, _Descending(c.version), c.bundle.name))


def _version(bundle: fbc.Bundle) -> semver.Version | None:
    text = bundle.version
    if text is None:
        return None
    try:
        return semver.parse_version(text, strict=True)
    except semver.VersionError:
        return None


def _is_successor(
    name: str, installed: Installed, installed_version: semver.Version, channels: Sequence[fbc.Channel]
) -> bool:
    for channel in channels:
        for entry in channel.entries:
            if entry.name != name:
                continue
            if entry.replaces == installed.name or installed.name in entry.skips:
                return True
            if entry.skip_range and _in_skip_range(entry.skip_range, installed_version):
                return True
    return False


def _in_skip_range(text: str, version: semver.Version) -> bool:
    try:
        return semver.parse_skip_range(text).matches(version)
    except semver.RangeError:
        return False  # a broken skipRange grants no edge


def _deprecated_bundles(deprecations: fbc.Deprecations | None) -> dict[str, str]:
    if deprecations is None:
        return {}
    return {
        e.reference.name: e.message for e in deprecations.entries if e.reference.schema_ == fbc.SCHEMA_BUNDLE
    }


def _deprecation(winner: _Candidate, channels: tuple[str, ...]) -> Deprecation:
    content = winner.catalog.content
    entries = content.deprecations.entries if content.deprecations is not None else ()
    package = next((e.message for e in entries if e.reference.schema_ == fbc.SCHEMA_PACKAGE), None)
    bundle = next(
        (
            e.message
            for e in entries
            if e.reference.schema_ == fbc.SCHEMA_BUNDLE and e.reference.name == winner.bundle.name
        ),
        None,
    )
    holding = sorted(
        c.name
        for c in content.channels
        if (not channels or c.name in channels) and any(e.name == winner.bundle.name for e in c.entries)
    )
    channel_messages = {
        e.reference.name: e.message for e in entries if e.reference.schema_ == fbc.SCHEMA_CHANNEL
    }
    deprecated_channels = tuple(
        (name, channel_messages[name]) for name in holding if name in channel_messages
    )
    return Deprecation(package=package, channels=deprecated_channels, bundle=bundle)


def _with_skipped(message: str, skipped: Sequence[str]) -> str:
    if not skipped:
        return message
    return f"{message} (catalogs not serving, skipped: [{' '.join(sorted(skipped))}])"


@dataclass(frozen=True)
class _Descending:
    version: semver.Version

    def __lt__(self, other: _Descending) -> bool:
        return other.version < self.version
