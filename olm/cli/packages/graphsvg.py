"""The upgrade graph drawn as a standalone SVG document (pure logic, no graphics library).

The layout is a table, which stays readable when a package has 50+ bundles and dense skipRanges:

- one row per bundle, highest version at the top, its version written once at the left;
- one vertical lane per channel (the default channel first), in the channel's colour, with a dot on
  each row whose bundle the channel holds;
- inside a lane, `replaces` is a solid line with an arrow towards the newer bundle: straight when it
  joins two neighbouring dots of the lane, otherwise an arc to the right; `skips` is a dashed arc to
  the right, wider the more rows it spans;
- a `skipRange` is drawn once per channel entry instead of once per matched version: a bracket to
  the left of the dots covering the rows whose versions it matches, joined to its bundle by a thin
  line ending in an arrow. Brackets that overlap get tracks of their own, the inner ones nearer the
  dots, so nested ranges read as a staircase.

Deprecated bundles have a red ring and a red label, deprecated channels a red header and a tinted
lane, a deprecated package a red line under the title; the installed bundle's row is highlighted.
Every label is a `<text>` element in a monospace font, so widths are computed from character counts
and the document stays searchable and testable.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from olm.cli.packages.upgradegraph import EdgeKind, SkipRange, UpgradeGraph

__all__ = ["render"]

FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
FONT_SIZE = 12
CHAR = 7.3
"""Advance of one character of FONT at FONT_SIZE, rounded up."""
ROW = 22
DOT = 4.5
TRACK = 5
"""Distance between two skipRange bracket tracks."""
MAX_BULGE = 56
LEGEND = (
    "-->  replaces    -->  skips    |  skipRange: covers the versions beside it"
    "    o  deprecated    o  from another channel    #  installed"
)
"""As wide as the drawn legend, to size the picture."""
MARGIN = 16
LABEL_GAP = 14
DEPRECATED = "#c62828"
INSTALLED = "#ffe58a"
STRIPE = "#f4f6f8"
MUTED = "#78808a"
PALETTE = (
    "#1f77b4",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#3b4cc0",
    "#bcbd22",
    "#5f6b7a",
)


def render(graph: UpgradeGraph) -> str:
    """The SVG document of `graph`."""
    return _Drawing(graph).svg()


@dataclass
class _Lane:
    channel: str
    colour: str
    marker: str
    x: float
    width: float
    dot_x: float
    tracks: dict[int, int]
    """Index of a skip range in the graph -> its track (0 nearest the dots)."""
    deprecated: str


@dataclass
class _Drawing:
    graph: UpgradeGraph
    parts: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        graph = self.graph
        self.rows = {n.bundle: i for i, n in enumerate(graph.nodes)}
        labels = [
            self._label(n.version or n.bundle, n.deprecated, n.installed, bool(n.channels))
            for n in graph.nodes
        ]
        self.label_width = max((_width(text) for text, _ in labels), default=0.0)
        self.labels = labels
        self.notes = self._notes()
        legend_lines = 2 if graph.deprecated else 1
        self.header_top = MARGIN + 2 * ROW + legend_lines * ROW
        self.top = self.header_top + 2 * ROW + 6
        x = MARGIN + self.label_width + LABEL_GAP
        self.lanes: list[_Lane] = []
        for index, channel in enumerate(graph.channels):
            lane = self._lane(index, channel, x)
            self.lanes.append(lane)
            x += lane.width
        texts = [self._title(), LEGEND, *self.notes]
        self.width = max(x + MARGIN, *(_width(t) + 2 * MARGIN for t in texts), 640.0)
        self.height = self.top + len(graph.nodes) * ROW + MARGIN + len(self.notes) * ROW

    # --- layout ---------------------------------------------------------------------------------

    def _label(self, text: str, deprecated: str, installed: bool, member: bool) -> tuple[str, str]:
        tags = [t for t, on in (("installed", installed), ("deprecated", bool(deprecated))) if on]
        if not member:
            tags.append("other channel")
        return text + ("  " + ", ".join(tags) if tags else ""), text

    def _lane(self, index: int, channel: str, x: float) -> _Lane:
        graph = self.graph
        ranges = [(i, r) for i, r in enumerate(graph.skip_ranges) if r.channel == channel and r.covers]
        tracks = _tracks([(i, self._span(r)) for i, r in ranges])
        left = 10 + TRACK * (max(tracks.values(), default=-1) + 1)
        right = max((self._bulge(s, t) for s, t, _ in self._arcs(channel)), default=0) + 10
        header = max(
            _width(channel), _width("(deprecated)" if channel in graph.deprecated_channels else "default")
        )
        width = max(left + right + 2 * DOT, header + 16)
        dot_x = x + max(left + DOT, (width - right + left) / 2)
        return _Lane(
            channel=channel,
            colour=PALETTE[index % len(PALETTE)],
            marker=f"arrow-{index}",
            x=x,
            width=width,
            dot_x=dot_x,
            tracks=tracks,
            deprecated=graph.deprecated_channels.get(channel, ""),
        )

    def _span(self, skip_range: SkipRange) -> tuple[int, int]:
        rows = [self.rows[b] for b in (*skip_range.covers, skip_range.target)]
        return min(rows), max(rows)

    def _members(self, channel: str) -> set[int]:
        return {i for i, n in enumerate(self.graph.nodes) if channel in n.channels}

    def _arcs(self, channel: str) -> list[tuple[str, str, EdgeKind]]:
        """The replaces and skips edges of `channel` that are drawn as arcs, not straight lines."""
        members = self._members(channel)
        arcs: list[tuple[str, str, EdgeKind]] = []
        for edge in self.graph.edges:
            if edge.channel != channel or edge.kind is EdgeKind.SKIP_RANGE:
                continue
            low, high = sorted((self.rows[edge.source], self.rows[edge.target]))
            neighbours = not any(low < row < high for row in members)
            if edge.kind is EdgeKind.SKIPS or not neighbours:
                arcs.append((edge.source, edge.target, edge.kind))
        return arcs

    def _bulge(self, source: str, target: str) -> float:
        span = abs(self.rows[source] - self.rows[target])
        return min(float(MAX_BULGE), 10 + 8 * math.log2(span + 1))

    def _y(self, bundle: str) -> float:
        return self.top + self.rows[bundle] * ROW + ROW / 2

    def _title(self) -> str:
        graph = self.graph
        scope = (
            f"channel {graph.channels[0]}" if len(graph.channels) == 1 else f"{len(graph.channels)} channels"
        )
        return f"{graph.package}: upgrade graph, {scope}, catalog {graph.catalog}"

    def _notes(self) -> list[str]:
        # One line per bundle the catalog lacks, however many entries name it.
        named: dict[tuple[str, EdgeKind], tuple[set[str], set[str]]] = {}
        for ref in self.graph.missing:
            targets, channels = named.setdefault((ref.source, ref.kind), (set(), set()))
            targets.add(ref.target)
            channels.add(ref.channel)
        notes = []
        for (source, kind), (targets, channels) in named.items():
            verb = "replaced" if kind is EdgeKind.REPLACES else "skipped"
            node = self.graph.node(next(iter(targets)))
            by = (
                f"{len(targets)} bundles" if len(targets) > 1 or node is None else node.version or node.bundle
            )
            where = ", ".join(c for c in self.graph.channels if c in channels)
            notes.append(f"{source}: not in the catalog ({verb} by {by} in {where})")
        for skip_range in self.graph.skip_ranges:
            if not skip_range.valid:
                notes.append(
                    f"{skip_range.target}: skipRange {skip_range.text!r} does not parse and allows no upgrade"
                )
        return notes

    # --- drawing --------------------------------------------------------------------------------

    def svg(self) -> str:
        self._defs()
        self._title_and_legend()
        self._rows()
        for lane in self.lanes:
            self._draw_lane(lane)
        self._draw_notes()
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width:.0f}" height="{self.height:.0f}" '
            f'viewBox="0 0 {self.width:.0f} {self.height:.0f}" font-family={quoteattr(FONT)} '
            f'font-size="{FONT_SIZE}">'
        )
        return "\n".join([head, *self.parts, "</svg>"]) + "\n"

    def _add(self, element: str) -> None:
        self.parts.append(element)

    def _text(self, x: float, y: float, text: str, **attrs: str) -> None:
        extra = "".join(f" {k.replace('_', '-')}={quoteattr(v)}" for k, v in attrs.items())
        self._add(f'<text x="{x:.1f}" y="{y:.1f}"{extra}>{escape(text)}</text>')

    def _defs(self) -> None:
        self._add('<rect width="100%" height="100%" fill="#ffffff"/>')
        markers = [(lane.marker, lane.colour) for lane in self.lanes] + [("arrow-legend", MUTED)]
        self._add("<defs>")
        for marker, colour in markers:
            self._add(
                f'<marker id="{marker}" viewBox="0 0 8 8" refX="7" refY="4" markerUnits="userSpaceOnUse" '
                'markerWidth="6" markerHeight="6" orient="auto-start-reverse">'
                f'<path d="M0,0 L8,4 L0,8 z" fill="{colour}"/></marker>'
            )
        self._add("</defs>")

    def _title_and_legend(self) -> None:
        graph = self.graph
        y = MARGIN + ROW * 0.7
        self._text(MARGIN, y, self._title(), font_size="15", font_weight="bold")
        if graph.deprecated:
            y += ROW
            self._text(MARGIN, y, f"package deprecated: {_one_line(graph.deprecated)}", fill=DEPRECATED)
        y += ROW
        x = float(MARGIN)
        line = f'stroke="{MUTED}" stroke-width="1.6" fill="none"'
        self._add(
            f'<line x1="{x}" y1="{y - 4}" x2="{x + 26}" y2="{y - 4}" {line} marker-end="url(#arrow-legend)"/>'
        )
        x += 32
        x = self._legend_text(x, y, "replaces")
        self._add(
            f'<path d="M{x},{y - 4} q13,-9 26,0" {line} stroke-dasharray="4 3" '
            'marker-end="url(#arrow-legend)"/>'
        )
        x += 32
        x = self._legend_text(x, y, "skips")
        self._add(
            f'<line x1="{x + 2}" y1="{y - 11}" x2="{x + 2}" y2="{y + 2}" stroke="{MUTED}" stroke-width="3.5" '
            'stroke-linecap="round" opacity="0.6"/>'
        )
        x += 10
        x = self._legend_text(x, y, "skipRange: covers the versions beside it")
        self._add(
            f'<circle cx="{x + 5}" cy="{y - 4}" r="{DOT}" fill="#fff" stroke="{DEPRECATED}" '
            'stroke-width="2"/>'
        )
        x += 14
        x = self._legend_text(x, y, "deprecated", fill=DEPRECATED)
        self._add(
            f'<circle cx="{x + 5}" cy="{y - 4}" r="{DOT - 1}" fill="#fff" stroke="{MUTED}" '
            'stroke-width="1.2" stroke-dasharray="2 1.5"/>'
        )
        x += 14
        x = self._legend_text(x, y, "from another channel")
        self._add(f'<rect x="{x}" y="{y - 13}" width="14" height="14" fill="{INSTALLED}"/>')
        x += 18
        self._legend_text(x, y, "installed")

    def _legend_text(self, x: float, y: float, text: str, **attrs: str) -> float:
        self._text(x, y, text, **attrs)
        return x + _width(text) + 18

    def _rows(self) -> None:
        graph = self.graph
        right = self.width - MARGIN
        for i, node in enumerate(graph.nodes):
            top = self.top + i * ROW
            fill = INSTALLED if node.installed else STRIPE if i % 2 else ""
            if fill:
                self._add(
                    f'<rect x="{MARGIN - 4}" y="{top}" width="{right - MARGIN + 8}" height="{ROW}" '
                    f'fill="{fill}"/>'
                )
        for lane in self.lanes:
            if lane.deprecated:
                self._add(
                    f'<rect x="{lane.x + 2}" y="{self.header_top}" width="{lane.width - 4}" '
                    f'height="{self.top - self.header_top + len(graph.nodes) * ROW}" fill="{DEPRECATED}" '
                    'opacity="0.07"/>'
                )
        for i, node in enumerate(graph.nodes):
            y = self.top + i * ROW + ROW / 2 + 4
            full, version = self.labels[i]
            colour = DEPRECATED if node.deprecated else "#1b1f24" if node.channels else MUTED
            title = node.bundle + (f"\ndeprecated: {node.deprecated.strip()}" if node.deprecated else "")
            tags = full[len(version) :].strip()
            weight = ' font-weight="bold"' if node.installed else ""
            tag_colour = DEPRECATED if node.deprecated else MUTED
            self._add(
                f'<g><title>{escape(title)}</title><text x="{MARGIN}" y="{y:.1f}" fill="{colour}"{weight}>'
                f'{escape(version)}<tspan dx="10" font-size="10" fill="{tag_colour}">'
                f"{escape(tags)}</tspan></text></g>"
            )

    def _draw_lane(self, lane: _Lane) -> None:
        graph = self.graph
        centre = lane.x + lane.width / 2
        self._text(
            centre,
            self.header_top + ROW * 0.8,
            lane.channel,
            text_anchor="middle",
            font_weight="bold",
            fill=lane.colour,
        )
        tag = (
            "(deprecated)" if lane.deprecated else "default" if lane.channel == graph.default_channel else ""
        )
        if tag:
            self._text(
                centre,
                self.header_top + ROW * 1.6,
                tag,
                text_anchor="middle",
                font_size="10",
                fill=DEPRECATED if lane.deprecated else MUTED,
            )
        self._add(
            f'<line x1="{lane.dot_x:.1f}" y1="{self.top - 4}" x2="{lane.dot_x:.1f}" '
            f'y2="{self.top + len(graph.nodes) * ROW + 4}" stroke="{lane.colour}" stroke-width="0.6" '
            'opacity="0.25"/>'
        )
        self._draw_ranges(lane)
        self._draw_edges(lane)
        sources = {
            e.source for e in graph.edges if e.channel == lane.channel and e.kind is not EdgeKind.SKIP_RANGE
        }
        for i, node in enumerate(graph.nodes):
            y = self.top + i * ROW + ROW / 2
            if lane.channel not in node.channels:
                if node.bundle in sources:  # an edge from a bundle of another channel starts here
                    self._add(
                        f'<circle cx="{lane.dot_x:.1f}" cy="{y:.1f}" r="{DOT - 1}" fill="#ffffff" '
                        f'stroke="{lane.colour}" stroke-width="1.2" stroke-dasharray="2 1.5"><title>'
                        f"{escape(node.bundle)}, not in {escape(lane.channel)}</title></circle>"
                    )
                continue
            if node.deprecated:
                dot = f'fill="#ffffff" stroke="{DEPRECATED}" stroke-width="2.2"'
            else:
                dot = f'fill="{lane.colour}" stroke="#ffffff" stroke-width="1"'
            self._add(
                f'<circle cx="{lane.dot_x:.1f}" cy="{y:.1f}" r="{DOT}" {dot}><title>'
                f"{escape(node.bundle)} in {escape(lane.channel)}</title></circle>"
            )

    def _draw_edges(self, lane: _Lane) -> None:
        arcs = {(s, t, k) for s, t, k in self._arcs(lane.channel)}
        style = f'stroke="{lane.colour}" stroke-width="1.5" fill="none" marker-end="url(#{lane.marker})"'
        for edge in self.graph.edges:
            if edge.channel != lane.channel or edge.kind is EdgeKind.SKIP_RANGE:
                continue
            y1, y2 = self._y(edge.source), self._y(edge.target)
            dash = ' stroke-dasharray="4 3"' if edge.kind is EdgeKind.SKIPS else ""
            title = f"<title>{escape(edge.target)} {edge.kind.value} {escape(edge.source)}</title>"
            x = lane.dot_x
            if (edge.source, edge.target, edge.kind) in arcs:
                bulge = self._bulge(edge.source, edge.target)
                self._add(
                    f'<path d="M{x + DOT:.1f},{y1:.1f} C{x + bulge:.1f},{y1:.1f} {x + bulge:.1f},{y2:.1f} '
                    f'{x + DOT + 1.5:.1f},{y2:.1f}" {style}{dash}>{title}</path>'
                )
            else:
                toward = 1 if y1 > y2 else -1
                self._add(
                    f'<line x1="{x:.1f}" y1="{y1 - toward * DOT:.1f}" x2="{x:.1f}" '
                    f'y2="{y2 + toward * (DOT + 1.5):.1f}" {style}{dash}>{title}</line>'
                )

    def _draw_ranges(self, lane: _Lane) -> None:
        for index, track in sorted(lane.tracks.items(), key=lambda item: -item[1]):
            skip_range = self.graph.skip_ranges[index]
            x = lane.dot_x - DOT - 6 - track * TRACK
            y_target = self._y(skip_range.target)
            rows = sorted(self.rows[b] for b in skip_range.covers)
            title = f"<title>{escape(skip_range.target)} skipRange {escape(skip_range.text)}</title>"
            self._add(f'<g stroke="{lane.colour}">{title}')
            for first, last in _runs(rows):
                y1 = self.top + first * ROW + 5
                y2 = self.top + (last + 1) * ROW - 5
                self._add(
                    f'<line x1="{x:.1f}" y1="{y1:.1f}" x2="{x:.1f}" y2="{y2:.1f}" stroke-width="3.5" '
                    'stroke-linecap="round" opacity="0.55"/>'
                )
            nearest = min(rows, key=lambda row: abs(row - self.rows[skip_range.target]))
            y_near = self.top + nearest * ROW + ROW / 2
            self._add(
                f'<path d="M{x:.1f},{y_near:.1f} L{x:.1f},{y_target:.1f} '
                f'L{lane.dot_x - DOT - 1.5:.1f},{y_target:.1f}" '
                f'stroke-width="1" fill="none" marker-end="url(#{lane.marker})"/>'
            )
            self._add("</g>")

    def _draw_notes(self) -> None:
        y = self.top + len(self.graph.nodes) * ROW + MARGIN
        for note in self.notes:
            self._text(MARGIN, y, note, fill=MUTED)
            y += ROW


def _tracks(spans: Sequence[tuple[int, tuple[int, int]]]) -> dict[int, int]:
    """Give each (key, (first row, last row)) the lowest track no overlapping span holds, taking
    spans whose top row is lowest first, so that enclosing spans end up outside enclosed ones."""
    taken: list[list[tuple[int, int]]] = []
    found: dict[int, int] = {}
    for key, (first, last) in sorted(spans, key=lambda item: (-item[1][0], item[1][1])):
        track = next(
            (t for t, used in enumerate(taken) if all(last < a or first > b for a, b in used)),
            len(taken),
        )
        if track == len(taken):
            taken.append([])
        taken[track].append((first, last))
        found[key] = track
    return found


def _runs(rows: Iterable[int]) -> list[tuple[int, int]]:
    """Consecutive rows grouped as (first, last) runs."""
    runs: list[tuple[int, int]] = []
    for row in rows:
        if runs and row == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], row)
        else:
            runs.append((row, row))
    return runs


def _width(text: str) -> float:
    return len(text) * CHAR


def _one_line(text: str) -> str:
    return " ".join(text.split())
