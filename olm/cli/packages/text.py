"""`package show` and `package versions` for people (pure functions)."""

from __future__ import annotations

from collections.abc import Sequence

from olm.cli import render
from olm.cli.packages.summary import PackageSummary, VersionRow

__all__ = ["package_text", "versions_table"]


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
    out.extend("  " + line for line in render.table(["CHANNEL", "VERSIONS"], rows).splitlines())
    return "\n".join(out) + "\n"


def versions_table(rows: Sequence[tuple[str, VersionRow]]) -> str:
    """`package versions` for people; each row is (catalog, entry)."""
    return render.table(
        ["CATALOG", "VERSION", "BUNDLE", "REPLACES", "SKIP RANGE", "DEPRECATED"],
        [
            [catalog, r.version, r.bundle, r.replaces, r.skip_range, "yes" if r.deprecated else ""]
            for catalog, r in rows
        ],
    )
