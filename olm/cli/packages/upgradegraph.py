"""The upgrade graph of one package in one catalog, as data (pure logic): its bundles and the typed
edges between them, ready to draw as SVG (`graphsvg`) or Graphviz dot (`graphdot`).

An edge goes from the bundle an upgrade starts at to the bundle it may reach, in one channel:

- `replaces`: the channel entry names the bundle it replaces;
- `skips`: the entry lists the bundle in `skips`;
- `skipRange`: the entry's `skipRange` matches the bundle's version, evaluated with the resolver's
  own range code (`olm.semver.parse_skip_range`, blang semantics, strict versions). As in the
  resolver, every version of the package can match, whichever channel holds it, and a malformed
  range grants nothing (the graph keeps its text so the drawing can say so).

Nodes are the entries of the drawn channels plus the bundles of the package that those entries
name but that sit only in other channels. Names of bundles the catalog does not hold at all are
kept as `missing` references rather than nodes: their version is unknown, so they have no place
in a picture ordered by version.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from olm import semver
from olm.cli.packages.summary import deprecations
from olm.pipeline.catalogs import PackageContent

__all__ = [
    "Edge",
    "EdgeKind",
    "MissingReference",
    "NoSuchChannel",
    "Node",
    "SkipRange",
    "UpgradeGraph",
    "build",
]


class EdgeKind(StrEnum):
    REPLACES = "replaces"
    SKIPS = "skips"
    SKIP_RANGE = "skipRange"


class NoSuchChannel(LookupError):
    """The package has no channel of that name."""


@dataclass(frozen=True, kw_only=True)
class Node:
    bundle: str
    version: str
    """As the bundle's `olm.package` property writes it; empty when it has none."""
    channels: tuple[str, ...]
    """The drawn channels holding this bundle; empty for a bundle of another channel that one of
    them names in `replaces` or `skips`."""
    deprecated: str = ""
    """The bundle's deprecation message; empty when it is not deprecated."""
    installed: bool = False


@dataclass(frozen=True, kw_only=True)
class Edge:
    source: str
    """The bundle an upgrade starts from."""
    target: str
    """The bundle it may upgrade to (the channel entry that declares the edge)."""
    kind: EdgeKind
    channel: str


@dataclass(frozen=True, kw_only=True)
class SkipRange:
    """One channel entry's `skipRange` and the nodes it covers."""

    target: str
    channel: str
    text: str
    covers: tuple[str, ...]
    """The bundles whose versions match, highest first (the same sources as its edges)."""
    valid: bool = True
    """False when the range does not parse: then it covers nothing, as in the resolver."""


@dataclass(frozen=True, kw_only=True)
class MissingReference:
    """A `replaces` or `skips` naming a bundle that the catalog does not hold."""

    source: str
    """The name that is not a bundle of the catalog."""
    target: str
    kind: EdgeKind
    channel: str


@dataclass(frozen=True, kw_only=True)
class UpgradeGraph:
    package: str
    catalog: str
    channels: tuple[str, ...]
    """The drawn channels, the default channel first, then by name."""
    default_channel: str
    nodes: tuple[Node, ...]
    """Highest version first; bundles without a strict semver version last, by name."""
    edges: tuple[Edge, ...]
    skip_ranges: tuple[SkipRange, ...]
    missing: tuple[MissingReference, ...] = ()
    deprecated: str = ""
    """The package's deprecation message."""
    deprecated_channels: Mapping[str, str] = field(default_factory=dict)
    """Drawn channel -> its deprecation message, for the deprecated ones."""
    installed: str = ""
    """The installed bundle's name when it was asked for (it may not be a node)."""

    def node(self, bundle: str) -> Node | None:
        return next((n for n in self.nodes if n.bundle == bundle), None)

    def edges_of(self, kind: EdgeKind) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.kind is kind)


def build(
    content: PackageContent, catalog: str, *, channel: str | None = None, installed: str = ""
) -> UpgradeGraph:
    """The graph of `channel`, or of every channel when None; `installed` names the bundle to mark.

    Raises `NoSuchChannel` when the package has no channel named `channel`.
    """
    default = content.package.default_channel if content.package else ""
    if channel is None:
        drawn = sorted(content.channels, key=lambda c: (c.name != default, c.name))
    else:
        drawn = [c for c in content.channels if c.name == channel]
        if not drawn:
            names = ", ".join(sorted(c.name for c in content.channels)) or "none"
            raise NoSuchChannel(
                f"catalog {catalog!r} has no channel {channel!r} of {content.name!r} (channels: {names})"
            )
    bundles = {b.name: b for b in content.bundles}
    members: dict[str, list[str]] = {}
    for drawn_channel in drawn:
        for entry in drawn_channel.entries:
            members.setdefault(entry.name, []).append(drawn_channel.name)
    referenced = {
        name
        for drawn_channel in drawn
        for entry in drawn_channel.entries
        for name in (entry.replaces, *entry.skips)
        if name and name in bundles and name not in members
    }
    package_deprecation, channel_deprecations, bundle_deprecations = deprecations(content)
    nodes = sorted(
        (
            Node(
                bundle=name,
                version=(bundles[name].version if name in bundles else None) or "",
                channels=tuple(members.get(name, ())),
                deprecated=bundle_deprecations.get(name, ""),
                installed=name == installed,
            )
            for name in {*members, *referenced}
        ),
        key=_order,
    )
    versions = {n.bundle: v for n in nodes if (v := _strict(n.version)) is not None}
    edges: list[Edge] = []
    missing: list[MissingReference] = []
    ranges: list[SkipRange] = []
    node_names = {n.bundle for n in nodes}
    for drawn_channel in drawn:
        for entry in drawn_channel.entries:
            named = [(entry.replaces, EdgeKind.REPLACES)] if entry.replaces else []
            named += [(skipped, EdgeKind.SKIPS) for skipped in entry.skips]
            for source, kind in named:
                if source in node_names:
                    edges.append(
                        Edge(source=source, target=entry.name, kind=kind, channel=drawn_channel.name)
                    )
                else:
                    missing.append(
                        MissingReference(
                            source=source, target=entry.name, kind=kind, channel=drawn_channel.name
                        )
                    )
            if entry.skip_range:
                covered = _covered(entry.skip_range, entry.name, nodes, versions)
                ranges.append(
                    SkipRange(
                        target=entry.name,
                        channel=drawn_channel.name,
                        text=entry.skip_range,
                        covers=covered or (),
                        valid=covered is not None,
                    )
                )
                edges.extend(
                    Edge(
                        source=source, target=entry.name, kind=EdgeKind.SKIP_RANGE, channel=drawn_channel.name
                    )
                    for source in covered or ()
                )
    return UpgradeGraph(
        package=content.name,
        catalog=catalog,
        channels=tuple(c.name for c in drawn),
        default_channel=default,
        nodes=tuple(nodes),
        edges=tuple(edges),
        skip_ranges=tuple(ranges),
        missing=tuple(missing),
        deprecated=package_deprecation,
        deprecated_channels={
            c.name: channel_deprecations[c.name] for c in drawn if c.name in channel_deprecations
        },
        installed=installed,
    )


def _strict(text: str) -> semver.Version | None:
    """The version as the resolver reads it: strict semver, else none at all."""
    try:
        return semver.parse_version(text, strict=True) if text else None
    except semver.VersionError:
        return None


def _order(node: Node) -> tuple[int, _Descending | None, str]:
    version = _strict(node.version)
    return (0, _Descending(version), node.bundle) if version is not None else (1, None, node.bundle)


@dataclass(frozen=True)
class _Descending:
    version: semver.Version

    def __lt__(self, other: _Descending) -> bool:
        return other.version < self.version


def _covered(
    text: str, target: str, nodes: list[Node], versions: Mapping[str, semver.Version]
) -> tuple[str, ...] | None:
    """The nodes (highest first) whose versions `text` matches, or None when it does not parse."""
    try:
        skip_range = semver.parse_skip_range(text)
    except semver.RangeError:
        return None
    return tuple(
        n.bundle
        for n in nodes
        if n.bundle != target and n.bundle in versions and skip_range.matches(versions[n.bundle])
    )
