"""Schema text becomes Markdown that renders as the words it holds: code spans survive, everything
else is escaped, nothing can break out of a table cell or start a block."""

from __future__ import annotations

import markdown
import pytest

from hack.apidocs.inline import block, cell, code, prose


def _html(text: str) -> str:
    rendered: str = markdown.markdown(text, extensions=["tables"])
    return rendered


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("self == oldSelf", "`self == oldSelf`", id="plain"),
        pytest.param("a `b` c", "``a `b` c``", id="backtick-inside"),
        pytest.param("`x`", "`` `x` ``", id="backtick-at-the-edges"),
        pytest.param("has(a)\n|| has(b)", "`has(a) || has(b)`", id="line-break"),
    ],
)
def test_code_spans_hold_any_text_on_one_line(text: str, expected: str) -> None:
    assert code(text) == expected


def test_prose_keeps_code_spans_and_escapes_the_rest() -> None:
    text = "Digest such as `sha256:<hex>`, of the form <algorithm>:<hex> | *any* a_b [x]"
    assert prose(text) == (
        r"Digest such as `sha256:<hex>`, of the form &lt;algorithm&gt;:&lt;hex&gt; \| \*any\* a\_b \[x\]"
    )


def test_escaped_prose_renders_as_the_original_words() -> None:
    html = _html(prose("Use <name> & *not* `a|b` | c"))
    assert html == "<p>Use &lt;name&gt; &amp; *not* <code>a|b</code> | c</p>"


def test_prose_collapses_line_breaks_outside_code() -> None:
    assert prose("one\n  two `x`\nthree\n") == "one two `x` three"


def test_a_cell_keeps_paragraphs_apart_and_a_table_row_intact() -> None:
    value = cell("First | part.\n\nSecond `a || b` part.")
    assert value == r"First \| part.<br>Second `a || b` part."
    html = _html(f"| a | b |\n|---|---|\n| {value} | end |\n")
    assert html.count("<td>") == 2
    assert "<td>end</td>" in html


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("# not a heading", r"\# not a heading", id="heading"),
        pytest.param("- not a list", r"\- not a list", id="bullet"),
        pytest.param("+ not a list", r"\+ not a list", id="plus"),
        pytest.param("1. not a list", r"1\. not a list", id="ordered"),
        pytest.param("2) not a list", r"2\) not a list", id="ordered-paren"),
        pytest.param("A sentence.\n\n3. Another", "A sentence.\n\n3\\. Another", id="second-paragraph"),
    ],
)
def test_block_prose_never_starts_a_block(text: str, expected: str) -> None:
    assert block(text) == expected
    assert "<ol>" not in _html(block(text))
    assert "<ul>" not in _html(block(text))
    assert "<h1>" not in _html(block(text))
