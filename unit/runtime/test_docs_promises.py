"""Every test the runtime docs name as holding a promise exists, so the promise tables stay honest."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "runtime"
REFERENCE = re.compile(r"`((?:unit|e2e)/[\w/]+\.py)::(\w+)`")


def _test_names(path: Path) -> set[str]:
    """Test functions, and tests bound to a name (a hypothesis state machine's `TestCase`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return {name for name in names if name.startswith("test_")}


def test_every_test_named_in_docs_runtime_exists() -> None:
    references = [
        (doc.name, *match)
        for doc in sorted(DOCS.glob("*.md"))
        for match in REFERENCE.findall(doc.read_text())
    ]
    assert len(references) > 100, "the promise tables were read"
    missing = [
        f"{doc}: {path}::{name}"
        for doc, path, name in references
        if not (ROOT / path).is_file() or name not in _test_names(ROOT / path)
    ]
    assert missing == []
