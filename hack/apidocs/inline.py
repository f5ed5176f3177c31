"""Inline Markdown from schema text: code spans, and prose that renders as the words it holds.

Schema descriptions are written for `kubectl explain` as well as for the site: plain text with code
in backticks. Everything outside the backticks is escaped, so a `<hex>` placeholder, a `|` or an
`*` in a description can neither become HTML nor break the table cell it sits in.
"""

from __future__ import annotations

import re

__all__ = ["block", "cell", "code", "prose"]

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_BACKSLASHED = frozenset("\\*_[]|")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
# What would turn the start of a paragraph into a heading, list, quote or rule.
_BLOCK_START = re.compile(r"^(?:([#+-])|(\d+)([.)]))")


def code(text: str) -> str:
    """`text` as one code span, whatever backticks it holds; line breaks become spaces."""
    flat = " ".join(text.split("\n"))
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {flat} " if flat.startswith("`") or flat.endswith("`") else flat
    return f"{fence}{padded}{fence}"


def _escape(text: str) -> str:
    return "".join("\\" + ch if ch in _BACKSLASHED else _ENTITIES.get(ch, ch) for ch in text)


def prose(text: str) -> str:
    """`text` with its code spans kept and everything else escaped; whitespace runs collapse."""
    parts: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        parts.append(_escape(re.sub(r"\s+", " ", text[last : match.start()])))
        parts.append(code(match.group(2)))
        last = match.end()
    parts.append(_escape(re.sub(r"\s+", " ", text[last:])))
    return "".join(parts).strip()


def cell(text: str) -> str:
    """Prose for a table cell: paragraphs stay apart as line breaks."""
    paragraphs = [prose(p) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "<br>".join(paragraphs)


def block(text: str) -> str:
    """Prose as paragraphs of their own, none of which can start a heading or a list."""
    paragraphs = [prose(p) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "\n\n".join(_BLOCK_START.sub(_escape_block_start, p) for p in paragraphs)


def _escape_block_start(match: re.Match[str]) -> str:
    if match.group(1):
        return "\\" + match.group(1)
    return f"{match.group(2)}\\{match.group(3)}"
