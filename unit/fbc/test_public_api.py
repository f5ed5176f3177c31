"""The public surface of olm.fbc is pinned, and it stays a leaf."""

from __future__ import annotations

import ast
from pathlib import Path

from olm import fbc


def test_fbc_exports_exactly_these_names() -> None:
    assert sorted(fbc.__all__) == sorted(
        [
            "DEFAULT_MAX_OBJECT_BYTES",
            "PROPERTY_BUNDLE_OBJECT",
            "SCHEMA_BUNDLE",
            "SCHEMA_CHANNEL",
            "SCHEMA_DEPRECATIONS",
            "SCHEMA_PACKAGE",
            "SEMVER",
            "Bundle",
            "CatalogError",
            "Channel",
            "ChannelEntry",
            "DeprecationEntry",
            "DeprecationReference",
            "Deprecations",
            "Icon",
            "InvalidCatalog",
            "KubernetesLoader",
            "Meta",
            "Origin",
            "Package",
            "ParseError",
            "Problem",
            "Property",
            "RelatedImage",
            "ShapeError",
            "Validator",
            "View",
            "checked",
            "embedded_csv",
            "iter_files",
            "iter_metas",
            "iter_stream",
            "validate",
            "view",
        ]
    )
    for name in fbc.__all__:
        assert getattr(fbc, name) is not None


def test_fbc_imports_no_process_and_no_runtime() -> None:
    for path in Path(fbc.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("olm.catalogd", "olm.operator_controller", "olm.cli")), (
                    path
                )
                assert not node.module.startswith("olm_runtime"), path
