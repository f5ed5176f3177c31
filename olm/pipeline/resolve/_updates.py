"""Updates beyond the installed bundle: the newest one reachable, and which ones `spec.upgrade` lets
apply.

Reachable means what resolution would allow one step at a time: within the requested channels and
version range, and, under `CatalogProvided`, along upgrade edges (`replaces`, `skips`, `skipRange`)
from the installed bundle, each hop itself a bundle the filters allow. Under `SelfCertified` every
bundle the filters allow is one step away. The newest reachable bundle is chosen as resolution
chooses (non-deprecated first, then the highest version; across catalogs, the highest priority),
with the shortest path to it.

`spec.upgrade.automatic` classes an update by the semantic-version difference between the
installed version and the candidate, whatever the path between them; `approvedVersion` admits
exactly that version and the bundles on the way to it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from olm import fbc, semver
from olm.api.extensionspec import AutomaticUpdates, CatalogSource, UpgradeConstraintPolicy, UpgradeSpec
from olm.pipeline.catalogs.gathering import CatalogContent
from olm.pipeline.resolve._resolver import Installed, ResolvedBundle, successor_edge

__all__ = ["Update", "acceptance", "allowed_by_policy", "newest_update", "reachable", "update_class"]


@dataclass(frozen=True, kw_only=True)
class Update:
    """A bundle the installed one can move to, and the bundles installed one after the other to
    get there (the last being this one)."""

    bundle: ResolvedBundle
    path: tuple[str, ...]


def _version(bundle: fbc.Bundle) -> semver.Version | None:
    try:
        return semver.parse_version(bundle.version, strict=True) if bundle.version else None
    except semver.VersionError:
        return None


def _candidates(
    catalog: CatalogContent, source: CatalogSource
) -> tuple[list[fbc.Channel], dict[str, tuple[fbc.Bundle, semver.Version]]]:
    """The channels considered and the bundles the channel and range filters allow, by name."""
    content = catalog.content
    considered = [c for c in content.channels if not source.channels or c.name in source.channels]
    in_channels = {entry.name for channel in considered for entry in channel.entries}
    version_range = semver.parse_range(source.version) if source.version else None
    allowed: dict[str, tuple[fbc.Bundle, semver.Version]] = {}
    for bundle in content.bundles:
        if bundle.package != content.name or (source.channels and bundle.name not in in_channels):
            continue
        version = _version(bundle)
        if version is not None and (version_range is None or version_range.matches(version)):
            allowed[bundle.name] = (bundle, version)
    return considered, allowed


def reachable(
    source: CatalogSource, installed: Installed, catalog: CatalogContent
) -> dict[str, tuple[str, ...]]:
    """Every bundle of `catalog` the installed one can move to, with its shortest path (breadth
    first, so the path is shortest in hops; ties go to the edge met first)."""
    considered, allowed = _candidates(catalog, source)
    installed_version = semver.parse_version(installed.version)
    if source.upgrade_constraint_policy is UpgradeConstraintPolicy.SELF_CERTIFIED:
        return {name: (name,) for name, (_, v) in allowed.items() if v != installed_version}
    paths: dict[str, tuple[str, ...]] = {}
    queue: deque[tuple[str, semver.Version, tuple[str, ...]]] = deque(
        [(installed.name, installed_version, ())]
    )
    seen = {installed.name}
    while queue:
        name, version, path = queue.popleft()
        for candidate, (_, candidate_version) in sorted(allowed.items()):
            if candidate in seen or successor_edge(candidate, name, version, considered) is None:
                continue
            seen.add(candidate)
            paths[candidate] = (*path, candidate)
            queue.append((candidate, candidate_version, paths[candidate]))
    return paths


def newest_update(
    source: CatalogSource, installed: Installed, catalogs: Sequence[CatalogContent]
) -> Update | None:
    """The newest bundle the installed one can reach, or None when there is none beyond it."""
    installed_version = semver.parse_version(installed.version)
    best: tuple[tuple[int, int, semver.Version, str], Update] | None = None
    for catalog in catalogs:
        _, allowed = _candidates(catalog, source)
        deprecations = catalog.content.deprecations
        deprecated = {
            e.reference.name
            for e in (deprecations.entries if deprecations is not None else ())
            if e.reference.schema_ == fbc.SCHEMA_BUNDLE
        }
        for name, path in reachable(source, installed, catalog).items():
            bundle, version = allowed[name]
            if not installed_version < version:
                continue  # a downgrade (SelfCertified) is never "an update available"
            # Resolution's order: priority, then non-deprecated, then the highest version.
            key = (catalog.priority, name not in deprecated, version, catalog.name)
            if best is None or _better(key, best[0]):
                update = Update(
                    bundle=ResolvedBundle(
                        package=source.package_name,
                        name=name,
                        version=str(bundle.version),
                        image=bundle.image,
                        catalog=catalog.name,
                    ),
                    path=path,
                )
                best = (key, update)
    return best[1] if best is not None else None


def _better(a: tuple[int, int, semver.Version, str], b: tuple[int, int, semver.Version, str]) -> bool:
    if a[:2] != b[:2]:
        return a[:2] > b[:2]
    if a[2] != b[2]:
        return b[2] < a[2]
    return a[3] < b[3]  # the same version in two catalogs of one priority: by name, for determinism


def update_class(installed: semver.Version, candidate: semver.Version) -> str:
    """`patch`, `minor`, `major` or `downgrade`: how `candidate` differs from `installed`."""
    if candidate < installed:
        return "downgrade"
    if candidate.major != installed.major:
        return "major"
    return "minor" if candidate.minor != installed.minor else "patch"


_AUTOMATIC_CLASSES = {
    AutomaticUpdates.NONE: frozenset[str](),
    AutomaticUpdates.PATCH: frozenset({"patch"}),
    AutomaticUpdates.MINOR: frozenset({"patch", "minor"}),
}


def allowed_by_policy(
    automatic: AutomaticUpdates, installed: semver.Version, candidate: semver.Version
) -> bool:
    """Whether `automatic` lets the installed version move to `candidate` by itself (a downgrade
    only under `Any`)."""
    if automatic is AutomaticUpdates.ANY:
        return True
    return update_class(installed, candidate) in _AUTOMATIC_CLASSES[automatic]


def acceptance(
    upgrade: UpgradeSpec, source: CatalogSource, installed: Installed, catalogs: Sequence[CatalogContent]
) -> Callable[[semver.Version], bool] | None:
    """What `resolve(accept=...)` should accept for `upgrade`, or None when it accepts everything
    (`automatic: Any` and no approval). An approved version admits itself and every version on the
    shortest path to it."""
    if upgrade.automatic is AutomaticUpdates.ANY and upgrade.approved_version is None:
        return None
    installed_version = semver.parse_version(installed.version)
    approved: set[semver.Version] = set()
    if upgrade.approved_version is not None:
        target = semver.parse_version(upgrade.approved_version)
        for catalog in catalogs:
            _, allowed = _candidates(catalog, source)
            for name, path in reachable(source, installed, catalog).items():
                if allowed[name][1] == target:
                    approved.update(allowed[hop][1] for hop in path)

    def accept(version: semver.Version) -> bool:
        return version in approved or allowed_by_policy(upgrade.automatic, installed_version, version)

    return accept
