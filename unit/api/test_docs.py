"""The API reference pages name every field of their kind, so a new field cannot go undocumented."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from olm.api import models as api
from olm.api.crdgen.crd import crd

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api"
# Described once in index.md (conditions, label selectors) or in prose next to their parent.
_SHARED = re.compile(r"conditions\[\]\.|matchLabels|matchExpressions|assertions\[\]\.\w+\.")


def _paths(node: dict[str, Any], prefix: str) -> Iterator[str]:
    for name, child in node.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        yield path
        yield from _paths(child, path)
    if isinstance(node.get("items"), dict):
        yield from _paths(node["items"], prefix + "[]")


@pytest.mark.parametrize("resource", [pytest.param(r, id=r.info.singular) for r in api.RESOURCES])
def test_page_names_every_field(resource: type[api.Resource]) -> None:
    page = (DOCS / f"{resource.info.singular}.md").read_text(encoding="utf-8")
    schema = crd(resource)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    fields = [p for p in _paths(schema, "") if p.startswith(("spec.", "status.")) and not _SHARED.search(p)]
    assert [f for f in fields if f"`{f}`" not in page] == []


def test_index_links_every_page() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for resource in api.RESOURCES:
        assert f"({resource.info.singular}.md)" in index
