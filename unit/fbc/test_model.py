"""Typed views read the four OLM schemas, ignore unknown fields, and leave other schemas opaque."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from olm import fbc


def meta(obj: dict[str, Any]) -> fbc.Meta:
    [found] = fbc.iter_stream(io.BytesIO(json.dumps(obj).encode()), "x.json")
    return found


def test_package_view() -> None:
    view = fbc.view(
        meta(
            {
                "schema": "olm.package",
                "name": "p",
                "defaultChannel": "stable",
                "icon": {"base64data": "AA==", "mediatype": "image/png"},
                "description": "d",
            }
        )
    )
    assert isinstance(view, fbc.Package)
    assert (view.name, view.default_channel, view.icon and view.icon.mediatype) == (
        "p",
        "stable",
        "image/png",
    )


def test_channel_view_with_upgrade_edges() -> None:
    view = fbc.view(
        meta(
            {
                "schema": "olm.channel",
                "package": "p",
                "name": "c",
                "entries": [{"name": "b2", "replaces": "b1", "skips": ["b0"], "skipRange": ">=0.1.0 <2.0.0"}],
            }
        )
    )
    assert isinstance(view, fbc.Channel)
    [entry] = view.entries
    assert (entry.name, entry.replaces, entry.skips, entry.skip_range) == (
        "b2",
        "b1",
        ("b0",),
        ">=0.1.0 <2.0.0",
    )


def test_bundle_view_and_its_version() -> None:
    view = fbc.view(
        meta(
            {
                "schema": "olm.bundle",
                "package": "p",
                "name": "b",
                "image": "r.io/b@sha256:" + "a" * 64,
                "properties": [
                    {"type": "olm.package", "value": {"packageName": "p", "version": "1.2.3"}},
                    {"type": "olm.gvk", "value": {"group": "g", "kind": "K", "version": "v1"}},
                ],
                "relatedImages": [{"name": "op", "image": "r.io/op:1"}],
                "futureField": {"kept": True},
            }
        )
    )
    assert isinstance(view, fbc.Bundle)
    assert view.version == "1.2.3"
    assert view.properties_of("olm.gvk") == [{"group": "g", "kind": "K", "version": "v1"}]
    assert view.related_images[0].image == "r.io/op:1"
    assert not hasattr(view, "futureField")


def test_bundle_without_a_package_property_has_no_version() -> None:
    view = fbc.view(meta({"schema": "olm.bundle", "package": "p", "name": "b"}))
    assert isinstance(view, fbc.Bundle)
    assert view.version is None


def test_the_first_package_property_gives_the_version_as_upstream_reads_it() -> None:
    properties = [
        {"type": "olm.package", "value": {"packageName": "p", "version": v}} for v in ("1.0.0", "2.0.0")
    ]
    view = fbc.view(meta({"schema": "olm.bundle", "package": "p", "name": "b", "properties": properties}))
    assert isinstance(view, fbc.Bundle)
    assert view.version == "1.0.0"


def test_other_schemas_have_no_view() -> None:
    assert fbc.view(meta({"schema": "example.com/thing", "name": "x"})) is None


def test_wrong_shape_of_a_known_schema_raises() -> None:
    with pytest.raises(fbc.ShapeError, match=r"^entries: Input should be a valid array$"):
        fbc.view(meta({"schema": "olm.channel", "package": "p", "name": "c", "entries": "nope"}))


def test_meta_describes_itself_deterministically() -> None:
    assert (
        meta({"schema": "olm.bundle", "package": "p", "name": "b"}).describe()
        == "olm.bundle package 'p' name 'b'"
    )
