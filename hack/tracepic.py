"""Draw one trace from an OpenTelemetry Collector's file export as an SVG waterfall.

    python -m hack.tracepic traces.jsonl docs/observability/images/install-trace.svg

Reads the collector's file exporter output (OTLP JSON lines, as `olm_testkit.collector`
configures it), picks the trace of one ClusterExtension install (the largest trace rooted at
`reconcile clusterextension` that reached catalogd; `--trace` names another by ID) and draws each
span as a bar on a shared time axis, children under their parent, coloured by the process that
sent it; runs of identical childless siblings are drawn as one row.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from olm_testkit.collector import Span, parse_line

ROW = 20
LABEL_WIDTH = 430
BAR_WIDTH = 620
MARGIN = 16
HEADER = 58
COLOURS = {"operator-controller": "#3f51b5", "catalogd": "#e08a00"}
OTHER_COLOUR = "#607d8b"
KIND = {2: "server", 3: "client"}
GROUP_AT = 4


def read_spans(path: Path) -> list[Span]:
    return [span for line in path.read_text().splitlines() if line.strip() for span in parse_line(line)]


def install_trace(spans: Sequence[Span]) -> str:
    """The ID of the largest trace rooted at a ClusterExtension reconcile that reached catalogd."""
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    candidates = [
        members
        for members in by_trace.values()
        if any(s.name == "reconcile clusterextension" and not s.parent_span_id for s in members)
        and any(s.service == "catalogd" for s in members)
    ]
    if not candidates:
        raise SystemExit("no ClusterExtension reconcile trace that reached catalogd in the file")
    return max(candidates, key=len)[0].trace_id


@dataclass(frozen=True)
class Row:
    """One line of the picture: a span, or a run of `count` childless siblings of one name."""

    depth: int
    span: Span
    count: int = 1
    start_ns: int = 0
    end_ns: int = 0


def tree_order(spans: Sequence[Span]) -> list[Row]:
    """Rows depth-first, siblings by start time; spans whose parent is missing are roots. Runs of
    `GROUP_AT` or more consecutive childless siblings of one name (the permission preflight's
    SubjectAccessReviews) are one row spanning them all."""
    ids = {s.span_id for s in spans}
    children: dict[str, list[Span]] = {}
    for span in spans:
        parent = span.parent_span_id if span.parent_span_id in ids else ""
        children.setdefault(parent, []).append(span)
    rows: list[Row] = []

    def walk(parent: str, depth: int) -> None:
        siblings = sorted(children.get(parent, []), key=lambda s: s.start_ns)
        for _, run in itertools.groupby(siblings, key=lambda s: (s.name, s.span_id in children)):
            members = list(run)
            if len(members) >= GROUP_AT and members[0].span_id not in children:
                start, end = min(s.start_ns for s in members), max(s.end_ns for s in members)
                rows.append(Row(depth, members[0], len(members), start, end))
                continue
            for child in members:
                rows.append(Row(depth, child, 1, child.start_ns, child.end_ns))
                walk(child.span_id, depth + 1)

    walk("", 0)
    return rows


def _duration(ns: int) -> str:
    return f"{ns / 1e6:.1f} ms" if ns < 1e9 else f"{ns / 1e9:.2f} s"


def _label(row: Row) -> str:
    kind = KIND.get(row.span.kind)
    label = f"{row.span.name} ({kind})" if kind else row.span.name
    return f"{label} x{row.count}" if row.count > 1 else label


def render(spans: Sequence[Span], title: str) -> str:
    rows = tree_order(spans)
    start = min(s.start_ns for s in spans)
    total = max(max(s.end_ns for s in spans) - start, 1)
    width = MARGIN * 2 + LABEL_WIDTH + BAR_WIDTH + 80
    height = HEADER + ROW * len(rows) + MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{MARGIN}" y="22" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    legend_x = MARGIN
    for service, colour in COLOURS.items():
        parts.append(f'<rect x="{legend_x}" y="32" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{legend_x + 14}" y="41">{service}</text>')
        legend_x += 150
    parts.append(f'<rect x="{legend_x}" y="32" width="10" height="10" fill="#fff" stroke="#c62828"/>')
    parts.append(f'<text x="{legend_x + 14}" y="41">error status</text>')
    parts.append(f'<text x="{legend_x + 110}" y="41" fill="#555">total {_duration(total)}</text>')
    for index, row in enumerate(rows):
        y = HEADER + index * ROW
        if index % 2 == 0:
            parts.append(f'<rect x="0" y="{y}" width="{width}" height="{ROW}" fill="#f4f5f9"/>')
        parts.append(f'<text x="{MARGIN + row.depth * 12}" y="{y + 14}">{escape(_label(row))}</text>')
        x = MARGIN + LABEL_WIDTH + (row.start_ns - start) / total * BAR_WIDTH
        bar = max((row.end_ns - row.start_ns) / total * BAR_WIDTH, 1.5)
        colour = COLOURS.get(row.span.service, OTHER_COLOUR)
        stroke = ' stroke="#c62828" stroke-width="1.5"' if row.span.status_code == 2 else ""
        parts.append(
            f'<rect x="{x:.1f}" y="{y + 4}" width="{bar:.1f}" height="{ROW - 8}" '
            f'fill="{colour}" rx="2"{stroke}/>'
        )
        took = _duration(row.end_ns - row.start_ns)
        parts.append(f'<text x="{x + bar + 4:.1f}" y="{y + 14}" fill="#555">{took}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tracepic", description=__doc__.split("\n")[0])
    parser.add_argument("traces", type=Path, help="the collector's file export (OTLP JSON lines)")
    parser.add_argument("output", type=Path, help="the SVG to write")
    parser.add_argument("--trace", help="trace ID to draw (default: the ClusterExtension install)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    spans = read_spans(args.traces)
    trace_id = args.trace or install_trace(spans)
    members = [s for s in spans if s.trace_id == trace_id]
    if not members:
        print(f"error: no span of trace {trace_id} in {args.traces}", file=sys.stderr)
        return 1
    services = sorted({s.service for s in members})
    title = f"One ClusterExtension install: {len(members)} spans from {' and '.join(services)}"
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(members, title))
    print(f"{args.output}: trace {trace_id}, {len(members)} spans")
    return 0


if __name__ == "__main__":
    sys.exit(main())
