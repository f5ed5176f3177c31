"""The resolver: one package, the selected catalogs' content, the installed bundle -> one bundle."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from olm import fbc, semver
from olm.api.extensionspec import CatalogSource, UpgradeConstraintPolicy
from olm.pipeline.catalogs.gathering import CatalogContent, Skipped
from olm.pipeline.resolve._account import Advice, Miss, account
from olm.pipeline.resolve._errors import (
    AmbiguousCatalogs,
    InvalidVersionRange,
    NoBundlesFound,
    ResolutionError,
    UnsupportedDependency,
    describe,
)
from olm.pipeline.resolve._kube import CSV_METADATA, KUBE_VERSION, unsupported

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

BUNDLE_PROPERTIES = frozenset(("olm.package", CSV_METADATA, KUBE_VERSION, *UNSUPPORTED_DEPENDENCY_PROPERTIES))
"""Every bundle property type `resolve` reads (`olm.package` for `fbc.Bundle.version`, the
Kubernetes versions a bundle runs on, and the dependencies it refuses): a catalog client feeding it
may drop the rest (`catalogs.ClientOptions.bundle_properties`; of `olm.csv.metadata` it keeps only
`minKubeVersion`)."""

MAX_CHANNELS_NAMED = 5
"""Channels of a catalog named when none of the requested ones holds a bundle."""


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
    skipped: tuple[Skipped, ...] = ()
    """Catalogs that were selected but gave no content, as passed in (sorted)."""


@dataclass(frozen=True)
class _Candidate:
    catalog: CatalogContent
    bundle: fbc.Bundle
    version: semver.Version
    deprecated: bool


def resolve(
    source: CatalogSource,
    installed: Installed | None,
    catalogs: Sequence[CatalogContent],
    *,
    skipped: Sequence[Skipped] = (),
    not_selected: Sequence[str] = (),
    accept: Callable[[semver.Version], bool] | None = None,
    cluster: semver.Version | None = None,
) -> Resolution:
    """Choose the bundle to install for `source` (selector already applied: `catalogs` are the
    selected, serving ones) given what is `installed`.

    Within a catalog: bundles of the package in the requested channels (if any), within the version
    range (if any), and, unless `upgradeConstraintPolicy: SelfCertified`, successors of the
    installed bundle (replaces, skips, skipRange of an entry in a considered channel) or the
    installed version itself. Non-deprecated before deprecated, then highest version. Across
    catalogs: deprecated candidates drop out when a non-deprecated one exists, the highest priority
    wins, and a tie is an `AmbiguousCatalogs` error. `skipped` names the selected catalogs that
    gave no content and `not_selected` the catalogs the selector left out: when nothing is found,
    the error's explanation says, catalog by catalog, why (`_account`). Because successor filtering never
    depends on which catalogs are present, a missing catalog can make resolution fail but never
    choose a non-successor. `accept` (with something installed) narrows the candidates further to
    the versions it accepts and the installed one: `spec.upgrade`'s policy and approval. `cluster`
    (the cluster's Kubernetes version) drops the bundles that cannot run on it (`_kube`), except
    the installed version: what runs is never taken away. Raises a `ResolutionError` subclass.
    """
    package = source.package_name
    channels = source.channels
    range_text = source.version or ""
    version_range = _parse_range(range_text)
    installed_version = _parse_installed(installed)
    follow_edges = installed is not None and (
        source.upgrade_constraint_policy is not UpgradeConstraintPolicy.SELF_CERTIFIED
    )
    candidates: list[_Candidate] = []
    misses: list[Miss] = []
    for catalog in catalogs:
        best = _best_in(
            catalog,
            channels=channels,
            version_range=version_range,
            installed=installed if follow_edges else None,
            installed_version=installed_version,
            accept=accept if installed_version is not None else None,
            cluster=cluster,
        )
        if isinstance(best, Miss):
            misses.append(best)
        else:
            candidates.append(best)
    message = functools.partial(
        describe,
        package=package,
        version_range=range_text,
        channels=channels,
        installed_version=installed.version if installed is not None else None,
    )
    if not candidates:
        raise NoBundlesFound(message(), account(misses, skipped, not_selected))
    if any(not c.deprecated for c in candidates):
        candidates = [c for c in candidates if not c.deprecated]
    candidates.sort(key=lambda c: (-c.catalog.priority, c.catalog.name))
    top = candidates[0].catalog.priority
    tied = [c.catalog.name for c in candidates if c.catalog.priority == top]
    if len(tied) > 1:
        raise AmbiguousCatalogs(message(found=True, catalogs=tied), Advice.PRIORITY, tied)
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
    accept: Callable[[semver.Version], bool] | None = None,
    cluster: semver.Version | None = None,
) -> _Candidate | Miss:
    """The catalog's best candidate, or why it has none: the first filter that left nothing, in
    the order package, channels, version range, upgrade edges, `spec.upgrade`, cluster version."""
    content = catalog.content
    if content.empty:
        return Miss(catalog=catalog.name, why="package absent", advice=Advice.PACKAGE)
    considered = [c for c in content.channels if not channels or c.name in channels]
    in_channels = {entry.name for channel in considered for entry in channel.entries}
    versioned = [
        (bundle, version)
        for bundle in content.bundles
        if bundle.package == content.name and (not channels or bundle.name in in_channels)
        # a bundle without a valid version can neither be ranged nor ordered
        if (version := _version(bundle)) is not None
    ]
    if not versioned:
        names = sorted(c.name for c in content.channels)
        has = " ".join(names[:MAX_CHANNELS_NAMED]) + (" ..." if len(names) > MAX_CHANNELS_NAMED else "")
        why = f"no bundle in channels [{' '.join(channels)}], has [{has}]" if channels else "no bundles"
        return Miss(catalog=catalog.name, why=why, advice=Advice.CHANNEL if channels else Advice.PACKAGE)
    in_range = [(b, v) for b, v in versioned if version_range is None or version_range.matches(v)]
    if not in_range:
        highest = max(v for _, v in versioned)
        return Miss(
            catalog=catalog.name, why=f"no version in range, highest {highest}", advice=Advice.VERSION
        )
    if installed is not None and installed_version is not None:

        def allowed(bundle: fbc.Bundle, version: semver.Version) -> bool:
            return version == installed_version or _is_successor(
                bundle.name, installed, installed_version, considered
            )

        reachable = [(b, v) for b, v in in_range if allowed(b, v)]
        if not reachable:
            successors = [v for b, v in versioned if v != installed_version and allowed(b, v)]
            why = f"no successor of {installed.version}" + (" in range" if version_range is not None else "")
            if successors:
                why += f", highest successor {max(successors)}"
            return Miss(catalog=catalog.name, why=why, advice=Advice.SUCCESSOR)
        in_range = reachable
    if accept is not None:
        accepted = [(b, v) for b, v in in_range if v == installed_version or accept(v)]
        if not accepted:
            return Miss(catalog=catalog.name, why="no version spec.upgrade allows", advice=Advice.UPGRADE)
        in_range = accepted
    if cluster is not None:
        runnable = [(b, v) for b, v in in_range if v == installed_version or unsupported(b, cluster) is None]
        if not runnable:
            newest = max(in_range, key=lambda found: found[1])[0]
            return Miss(catalog=catalog.name, why=str(unsupported(newest, cluster)), advice=Advice.CLUSTER)
        in_range = runnable
    deprecated_bundles = _deprecated_bundles(content.deprecations)
    found = [_Candidate(catalog, b, v, b.name in deprecated_bundles) for b, v in in_range]
    return min(found, key=lambda c: (c.deprecated, _Descending(c.version), c.bundle.name))


def _version(bundle: fbc.Bundle) -> semver.Version | None:
    text = bundle.version
    if text is None:
        return None
    try:
        return semver.parse_version(text, strict=True)
    except semver.VersionError:
        return None


@dataclass(frozen=True, kw_only=True)
class SuccessorEdge:
    """Why a bundle may replace the installed one: the channel entry's `kind` of edge
    (`replaces`, `skips` or `skipRange`, with the range's text)."""

    kind: str
    channel: str
    skip_range: str = ""


def successor_edge(
    name: str, installed_name: str, installed_version: semver.Version | None, channels: Sequence[fbc.Channel]
) -> SuccessorEdge | None:
    """The first edge of `channels` by which bundle `name` succeeds the installed bundle, or None.
    A skipRange counts only when the installed version is known and the range parses."""
    for channel in channels:
        for entry in channel.entries:
            if entry.name != name:
                continue
            if entry.replaces == installed_name:
                return SuccessorEdge(kind="replaces", channel=channel.name)
            if installed_name in entry.skips:
                return SuccessorEdge(kind="skips", channel=channel.name)
            if (
                entry.skip_range
                and installed_version is not None
                and _in_skip_range(entry.skip_range, installed_version)
            ):
                return SuccessorEdge(kind="skipRange", channel=channel.name, skip_range=entry.skip_range)
    return None


def _is_successor(
    name: str, installed: Installed, installed_version: semver.Version, channels: Sequence[fbc.Channel]
) -> bool:
    return successor_edge(name, installed.name, installed_version, channels) is not None


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


@dataclass(frozen=True)
class _Descending:
    version: semver.Version

    def __lt__(self, other: _Descending) -> bool:
        return other.version < self.version
