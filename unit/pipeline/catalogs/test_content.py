"""What the resolver reads of a package: fields upstream's resolver reads as empty are accepted;
a wrongly typed field makes only that package unreadable from the catalog
(docs/compat/catalog-rules.md)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from olm.pipeline import catalogs

PACKAGE = {"schema": "olm.package", "name": "p"}
BUNDLE = {
    "schema": "olm.bundle",
    "package": "p",
    "name": "p.v1",
    "image": "r.io/p:1",
    "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}}],
}


def lines(*objects: dict[str, Any]) -> list[bytes]:
    return [orjson.dumps(o) for o in objects]


def test_fields_upstream_reads_as_empty_are_accepted() -> None:
    channel = {"schema": "olm.channel", "package": "p", "name": "s", "entries": [{}, {"name": "p.v1"}]}
    bundle = {
        **BUNDLE,
        "relatedImages": [{"name": "no-image"}],
        "properties": [*BUNDLE["properties"], {"value": "a property without a type"}],
    }
    deprecations = {
        "schema": "olm.deprecations",
        "package": "p",
        "entries": [{"reference": {"schema": "olm.other", "name": "x"}}, {"message": "no reference"}],
    }
    content = catalogs.parse_lines("c", "p", lines(PACKAGE, channel, bundle, deprecations))
    assert [e.name for e in content.channels[0].entries] == ["", "p.v1"]
    assert content.bundles[0].related_images[0].image == ""
    assert content.bundles[0].version == "1.0.0"
    assert content.deprecations is not None
    assert [(e.reference.schema_, e.message) for e in content.deprecations.entries] == [
        ("olm.other", ""),
        ("", "no reference"),
    ]


@pytest.mark.parametrize(
    ("malformed", "says"),
    [
        pytest.param(
            {**BUNDLE, "properties": "nope"}, "properties: Input should be a valid array", id="bundle"
        ),
        pytest.param(
            {"schema": "olm.channel", "package": "p", "name": "s", "entries": [{"name": 1}]},
            "entries.0.name: Input should be a valid string",
            id="channel",
        ),
    ],
)
def test_a_malformed_object_makes_only_its_package_unreadable(malformed: dict[str, Any], says: str) -> None:
    other = {"schema": "olm.package", "name": "q"}
    served = lines(PACKAGE, malformed, other)
    with pytest.raises(catalogs.MalformedCatalog, match=says):
        catalogs.parse_lines("c", "p", served)
    assert catalogs.parse_lines("c", "q", served).package is not None
