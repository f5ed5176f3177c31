"""The public surface of olm.semver is pinned: changing it must be a deliberate edit here."""

from __future__ import annotations

import ast
from pathlib import Path

from olm import semver


def test_exported_names() -> None:
    assert sorted(semver.__all__) == [
        "Range",
        "RangeError",
        "SkipRange",
        "Version",
        "VersionError",
        "parse_range",
        "parse_skip_range",
        "parse_version",
    ]
    for name in semver.__all__:
        assert getattr(semver, name) is not None


def test_semver_is_a_leaf() -> None:
    """olm.semver imports nothing from the processes (or the rest of olm)."""
    for path in Path(semver.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("olm."):
                assert node.module.startswith("olm.semver"), f"{path.name} imports {node.module}"
