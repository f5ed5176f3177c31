"""The upgrade graph as Graphviz dot (pure logic): the same nodes and edges as the SVG, one dot edge
per model edge, so `dot -Tsvg` or any other dot tool can lay it out its own way.

Edges point from the bundle an upgrade starts at to the bundle it reaches; `rankdir=BT` puts the
highest versions at the top. Styles: `replaces` solid, `skips` dashed, `skipRange` dotted; each
edge has its channel's colour and, when several channels are drawn, its channel as label.
Deprecated bundles are red, the installed one filled yellow.
"""

from __future__ import annotations

from olm.cli.packages.graphsvg import DEPRECATED, INSTALLED, PALETTE
from olm.cli.packages.upgradegraph import EdgeKind, UpgradeGraph

__all__ = ["render"]

_STYLES = {EdgeKind.REPLACES: "solid", EdgeKind.SKIPS: "dashed", EdgeKind.SKIP_RANGE: "dotted"}


def render(graph: UpgradeGraph) -> str:
    colours = {channel: PALETTE[i % len(PALETTE)] for i, channel in enumerate(graph.channels)}
    lines = [
        f"digraph {_quote(graph.package)} {{",
        f"  label={_quote(_title(graph))};",
        "  labelloc=t;",
        "  rankdir=BT;",
        '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="monospace"];',
        '  edge [fontname="monospace", fontsize=10];',
    ]
    for node in graph.nodes:
        attrs = {"label": node.version or node.bundle, "tooltip": node.bundle}
        if node.deprecated:
            attrs |= {
                "color": DEPRECATED,
                "fontcolor": DEPRECATED,
                "label": attrs["label"] + "\\n(deprecated)",
            }
        if node.installed:
            attrs |= {"fillcolor": INSTALLED, "penwidth": "2", "label": attrs["label"] + "\\n(installed)"}
        if not node.channels:
            attrs["style"] = "rounded,dashed"
        lines.append(f"  {_quote(node.bundle)} [{_attrs(attrs)}];")
    several = len(graph.channels) > 1
    for edge in graph.edges:
        attrs = {"style": _STYLES[edge.kind], "color": colours[edge.channel], "tooltip": edge.kind.value}
        if several:
            attrs |= {"label": edge.channel, "fontcolor": colours[edge.channel]}
        lines.append(f"  {_quote(edge.source)} -> {_quote(edge.target)} [{_attrs(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _title(graph: UpgradeGraph) -> str:
    title = f"{graph.package} ({graph.catalog}): {', '.join(graph.channels)}"
    if graph.deprecated:
        title += " (package deprecated)"
    deprecated = [c for c in graph.channels if c in graph.deprecated_channels]
    if deprecated:
        title += f"; deprecated channels: {', '.join(deprecated)}"
    return title


def _attrs(attrs: dict[str, str]) -> str:
    return ", ".join(f"{key}={_quote(value)}" for key, value in attrs.items())


def _quote(text: str) -> str:
    """A dot ID in double quotes; `\\n` escapes already in `text` are kept as dot line breaks."""
    return '"' + text.replace('"', '\\"') + '"'
