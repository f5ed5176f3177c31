"""How an installed bundle gets to an upgrade target (pure logic): a direct successor, a chain of
upgrades, or only with `upgradeConstraintPolicy: SelfCertified`.

A direct successor is decided exactly as the resolver decides it: some entry of a considered channel
names the target and `replaces` or `skips` the installed bundle, or its `skipRange` holds the
installed version. When the target is not one, the shortest chain of upgrade edges
(`upgradegraph`) says whether `CatalogProvided` upgrades would get there one step at a time.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from olm import semver
from olm.cli.packages import upgradegraph
from olm.pipeline.catalogs import PackageContent
from olm.pipeline.resolve import Installed, successor_edge

__all__ = ["Step", "UpgradePath", "Verdict", "upgrade_path"]


class Verdict(StrEnum):
    INSTALLED = "Installed"
    """The target is the installed bundle."""
    DIRECT = "DirectSuccessor"
    CHAIN = "Chain"
    """Reachable through successive upgrades, not at once."""
    NO_PATH = "NoPath"


@dataclass(frozen=True, kw_only=True)
class Step:
    source: str
    target: str
    kind: str
    """`replaces`, `skips` or `skipRange`."""
    channel: str
    skip_range: str = ""

    def describe(self) -> str:
        if self.kind == "skipRange":
            covers = f"covers {self.source} with skipRange {self.skip_range!r}"
            return f"{self.target} {covers} (channel {self.channel})"
        return f"{self.target} {self.kind} {self.source} (channel {self.channel})"


@dataclass(frozen=True, kw_only=True)
class UpgradePath:
    installed: str
    installed_version: str
    target: str
    target_version: str
    verdict: Verdict
    steps: tuple[Step, ...] = ()
    """The direct edge, or the shortest chain of edges, from the installed bundle to the target."""
    downgrade: bool = False

    @property
    def needs_self_certified(self) -> bool:
        """Whether `CatalogProvided` forbids moving straight to the target."""
        return self.verdict in (Verdict.CHAIN, Verdict.NO_PATH)

    def explain(self, channels: Sequence[str] = ()) -> str:
        """One or two sentences on how the installed bundle gets to the target."""
        where = f"channels [{' '.join(channels)}]" if channels else "any channel"
        if self.verdict is Verdict.INSTALLED:
            return f"{self.target} is installed already."
        if self.verdict is Verdict.DIRECT:
            return f"Direct successor: {self.steps[0].describe()}; allowed with CatalogProvided."
        if self.verdict is Verdict.CHAIN:
            chain = " -> ".join([self.installed, *(s.target for s in self.steps)])
            return (
                f"Not a direct successor of {self.installed}: CatalogProvided reaches it in "
                f"{len(self.steps)} upgrades ({chain}); to go there at once, upgradeConstraintPolicy "
                "must be SelfCertified."
            )
        what = "a downgrade" if self.downgrade else "not an upgrade the catalog publishes"
        return (
            f"No upgrade edge in {where} leads from {self.installed} to {self.target} ({what}); only "
            "upgradeConstraintPolicy SelfCertified allows it, after you have checked it is safe."
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "installed": {"name": self.installed, "version": self.installed_version},
            "target": {"name": self.target, "version": self.target_version},
            "verdict": str(self.verdict),
            "needsSelfCertified": self.needs_self_certified,
            "downgrade": self.downgrade,
            "steps": [
                {"from": s.source, "to": s.target, "kind": s.kind, "channel": s.channel}
                | ({"skipRange": s.skip_range} if s.skip_range else {})
                for s in self.steps
            ],
        }


def _version(text: str) -> semver.Version | None:
    try:
        return semver.parse_version(text)
    except semver.VersionError:
        return None


def _direct(
    content: PackageContent, installed: Installed, target: str, channels: Sequence[str]
) -> Step | None:
    """The resolver's own successor test, naming the edge it found."""
    considered = [c for c in content.channels if not channels or c.name in channels]
    edge = successor_edge(target, installed.name, _version(installed.version), considered)
    if edge is None:
        return None
    return Step(
        source=installed.name,
        target=target,
        kind=edge.kind,
        channel=edge.channel,
        skip_range=edge.skip_range,
    )


def _chain(
    graph: upgradegraph.UpgradeGraph, source: str, target: str, channels: Sequence[str]
) -> tuple[Step, ...] | None:
    """The shortest chain of edges from `source` to `target` (breadth first), or None."""
    ranges = {(r.target, r.channel): r.text for r in graph.skip_ranges}
    outgoing: dict[str, list[upgradegraph.Edge]] = {}
    for edge in graph.edges:
        if not channels or edge.channel in channels:
            outgoing.setdefault(edge.source, []).append(edge)
    previous: dict[str, upgradegraph.Edge] = {}
    queue = deque([source])
    seen = {source}
    while queue:
        node = queue.popleft()
        if node == target:
            steps: list[Step] = []
            while node != source:
                edge = previous[node]
                steps.append(
                    Step(
                        source=edge.source,
                        target=edge.target,
                        kind=str(edge.kind),
                        channel=edge.channel,
                        skip_range=ranges.get((edge.target, edge.channel), "")
                        if edge.kind is upgradegraph.EdgeKind.SKIP_RANGE
                        else "",
                    )
                )
                node = edge.source
            return tuple(reversed(steps))
        for edge in sorted(outgoing.get(node, ()), key=lambda e: (e.target, e.channel, e.kind)):
            if edge.target not in seen:
                seen.add(edge.target)
                previous[edge.target] = edge
                queue.append(edge.target)
    return None


def upgrade_path(
    content: PackageContent,
    catalog: str,
    installed: Installed,
    *,
    target: str,
    target_version: str,
    channels: Sequence[str] = (),
) -> UpgradePath:
    """How `installed` gets to bundle `target` of `content` through the considered `channels` (all
    when empty)."""
    base = UpgradePath(
        installed=installed.name,
        installed_version=installed.version,
        target=target,
        target_version=target_version,
        verdict=Verdict.NO_PATH,
    )
    if target == installed.name:
        return dataclasses.replace(base, verdict=Verdict.INSTALLED)
    direct = _direct(content, installed, target, channels)
    if direct is not None:
        return dataclasses.replace(base, verdict=Verdict.DIRECT, steps=(direct,))
    chain = _chain(upgradegraph.build(content, catalog), installed.name, target, channels)
    if chain:
        return dataclasses.replace(base, verdict=Verdict.CHAIN, steps=chain)
    old, new = _version(installed.version), _version(target_version)
    return dataclasses.replace(base, downgrade=old is not None and new is not None and new < old)
