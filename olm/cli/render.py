"""Output formats: aligned tables for people, JSON and YAML for scripts (pure functions).

YAML is imported when a command is asked for it (`-o yaml`), not before: most invocations print a
table or JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

import orjson

__all__ = ["dump", "emit", "table"]

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
        import yaml  # noqa: PLC0415  # only `-o yaml` pays for it

        return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True))
    raise ValueError(f"unknown output format {output!r}")


def emit(stream: TextIO, output: str, data: Any, text: str) -> None:
    """Write `text` for `-o table`, else `data` in the machine format `output`."""
    stream.write(text if output == "table" else dump(data, output))
