"""Output formats: aligned tables for people, JSON and YAML for scripts (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
import yaml

from olm.cli.summary import PackageSummary, VersionRow

__all__ = ["FORMATS", "dump", "package_text", "table", "versions_table"]

FORMATS = ("table", "json", "yaml")

_GAP = "   "  # kubectl's column gap


def table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns under upper-case headers, kubectl style; trailing spaces trimmed."""
    widths = [len(c) for c in columns]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    lines = [
        _GAP.join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in (columns, *rows)
    ]
    return "\n".join(lines) + "\n"


def dump(data: Any, output: str) -> str:
    """`data` (dicts, lists, scalars) as JSON (indented) or YAML (block style, keys in order)."""
    if output == "json":
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    if output == "yaml":
        return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True))
    raise ValueError(f"unknown output format {output!r}")


def _first_line(text: str, limit: int = 100) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def package_text(summary: PackageSummary) -> str:
    """`package show` for people: a header block and one line per channel."""
    fields = [
        ("Package", summary.package),
        ("Catalog", summary.catalog),
        ("Display name", summary.display_name),
        ("Description", _first_line(summary.description)),
        ("Default channel", summary.default_channel),
        ("Latest version", summary.latest_version),
        ("Deprecated", summary.deprecated),
        (
            "Install modes",
            ", ".join(mode for mode, supported in summary.install_modes if supported),
        ),
        (
            "Provided APIs",
            ", ".join(f"{k}.{g}/{v}" if g else f"{k}/{v}" for g, v, k in summary.provided_apis),
        ),
    ]
    width = max(len(name) for name, _ in fields) + 2
    out = [f"{name + ':':<{width}}{value}" for name, value in fields if value]
    out.append("Channels:")
    rows = []
    for channel in summary.channels:
        versions = ", ".join(
            f"{version} (deprecated)" if version in channel.deprecated_versions else version
            for version in channel.versions
        )
        rows.append([channel.name + (" (deprecated)" if channel.deprecated else ""), versions])
    out.extend("  " + line for line in table(["CHANNEL", "VERSIONS"], rows).splitlines())
    return "\n".join(out) + "\n"


def versions_table(rows: Sequence[tuple[str, VersionRow]]) -> str:
    """`package versions` for people; each row is (catalog, entry)."""
    return table(
        ["CATALOG", "VERSION", "BUNDLE", "REPLACES", "SKIP RANGE", "DEPRECATED"],
        [
            [catalog, r.version, r.bundle, r.replaces, r.skip_range, "yes" if r.deprecated else ""]
            for catalog, r in rows
        ],
    )
