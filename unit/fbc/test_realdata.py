"""Every real catalog under shared/realdata/catalogs parses and validates as it is (never edited)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import orjson
import pytest

from olm import fbc

CATALOGS = Path(__file__).resolve().parents[2] / ".." / "shared" / "realdata" / "catalogs"

pytestmark = pytest.mark.skipif(
    not CATALOGS.is_dir(), reason=f"the real catalogs are not present at {CATALOGS}"
)

# FBC root -> (packages, channels, bundles, other schemas)
ROOTS = {
    "community-operators-prod-v4.20": (37, 85, 803, 0),
    "compliance-operator-fbc/v4.16-bundle-object": (1, 3, 17, 0),
    "compliance-operator-fbc/v4.20-csv-metadata": (1, 3, 17, 0),
    "kueue-fbc-v4.20": (1, 4, 6, 0),
    "upstream-example-deprecations-grokspawn": (0, 0, 0, 0),  # its .indexignore hides the only file
    "upstream-fixture-operator-controller-e2e-test-catalog/v1/configs": (7, 8, 12, 0),
    "upstream-fixture-operator-controller-e2e-test-catalog/v2/configs": (1, 1, 1, 0),
}


def test_every_file_belongs_to_a_listed_catalog() -> None:
    for path in CATALOGS.rglob("*"):
        if path.is_file():
            relative = path.relative_to(CATALOGS).as_posix()
            assert any(relative.startswith(root + "/") for root in ROOTS), (
                f"{relative}: add its catalog to ROOTS"
            )


@pytest.mark.parametrize("root", list(ROOTS))
def test_real_catalog_parses_and_validates(root: str) -> None:
    metas = list(fbc.iter_metas(CATALOGS / root))
    assert fbc.validate(metas) == []
    counts = Counter(m.schema for m in metas)
    others = sum(
        n for schema, n in counts.items() if schema not in ("olm.package", "olm.channel", "olm.bundle")
    )
    assert (counts["olm.package"], counts["olm.channel"], counts["olm.bundle"], others) == ROOTS[root]
    for meta in metas:
        assert fbc.view(meta) is not None


def test_json_stream_catalog_keeps_every_object_exactly() -> None:
    source = (CATALOGS / "kueue-fbc-v4.20" / "kueue-operator" / "catalog.json").read_text()
    decoder, position, expected = json.JSONDecoder(), 0, []
    while position < len(source.rstrip()):
        value, end = decoder.raw_decode(source, position)
        expected.append(value)
        position = end + (len(source[end:]) - len(source[end:].lstrip()))
    metas = list(fbc.iter_metas(CATALOGS / "kueue-fbc-v4.20"))
    assert [orjson.loads(m.blob) for m in metas] == expected


def test_both_bundle_encodings_describe_the_same_bundles() -> None:
    def bundles(root: str) -> dict[str, tuple[str | None, set[str]]]:
        found = {}
        for meta in fbc.iter_metas(CATALOGS / "compliance-operator-fbc" / root):
            view = fbc.view(meta)
            if isinstance(view, fbc.Bundle):
                found[view.name] = (view.version, {p.type for p in view.properties})
        return found

    objects, metadata = bundles("v4.16-bundle-object"), bundles("v4.20-csv-metadata")
    assert {n: v for n, (v, _) in objects.items()} == {n: v for n, (v, _) in metadata.items()}
    assert all("olm.bundle.object" in types for _, types in objects.values())
    assert all("olm.csv.metadata" in types for _, types in metadata.values())


def test_standalone_deprecations_blob_has_a_typed_view() -> None:
    path = CATALOGS / "upstream-example-deprecations-grokspawn" / "deprecations.yaml"
    with path.open("rb") as stream:
        [meta] = fbc.iter_stream(stream, "deprecations.yaml")
    view = fbc.view(meta)
    assert isinstance(view, fbc.Deprecations)
    assert view.package == "mypackage"
    assert [(e.reference.schema_, e.reference.name) for e in view.entries] == [
        ("olm.bundle", "mypackage.v0.1.0"),
        ("olm.package", ""),
        ("olm.channel", "early"),
    ]
    # On its own it names a package the blob does not define; served anyway, as upstream's
    # catalogd serves it (docs/compat/catalog-rules.md): it deprecates nothing that is there.
    assert fbc.validate([meta]) == []


def test_indexignore_files_are_never_content() -> None:
    files = [
        relative
        for relative, _ in fbc.iter_files(
            CATALOGS / "upstream-fixture-operator-controller-e2e-test-catalog/v1"
        )
    ]
    assert files == ["configs/catalog.yaml"]
