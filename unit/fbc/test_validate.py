"""Validation rules, one case each; every problem names the file, the line and the object.

The catalogs upstream's catalogd serves are served too (docs/compat/catalog-rules.md); the cases
still refused each name the rule and why it is kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from olm import fbc


def package(name: str = "p", default: str = "stable") -> dict[str, Any]:
    return {"schema": "olm.package", "name": name, "defaultChannel": default}


def channel(name: str = "stable", pkg: str = "p", entries: tuple[str, ...] = ("p.v1",)) -> dict[str, Any]:
    return {"schema": "olm.channel", "package": pkg, "name": name, "entries": [{"name": e} for e in entries]}


def bundle(name: str = "p.v1", pkg: str = "p", version: Any = "1.0.0", **extra: Any) -> dict[str, Any]:
    properties = [{"type": "olm.package", "value": {"packageName": pkg, "version": version}}]
    return {
        "schema": "olm.bundle",
        "package": pkg,
        "name": name,
        "image": "r.io/b:1",
        "properties": properties,
        **extra,
    }


VALID = [package(), channel(), bundle()]


def problems(tmp_path: Path, objects: list[dict[str, Any]]) -> list[str]:
    (tmp_path / "catalog.json").write_text("\n".join(json.dumps(o) for o in objects))
    return [str(p) for p in fbc.validate(fbc.iter_metas(tmp_path))]


def test_valid_catalog_has_no_problems(tmp_path: Path) -> None:
    assert problems(tmp_path, VALID) == []


def test_a_package_without_a_default_channel_is_valid(tmp_path: Path) -> None:
    # Upstream's catalogd serves it, and generators such as `opm render` of some bundles write it.
    assert problems(tmp_path, [package(default=""), channel(), bundle()]) == []


def test_other_schemas_are_carried_without_checks(tmp_path: Path) -> None:
    assert problems(tmp_path, [*VALID, {"schema": "example.com/custom", "anything": [1, 2]}]) == []


def deprecations(pkg: str = "p", *references: tuple[str, str]) -> dict[str, Any]:
    entries = [{"reference": {"schema": schema, "name": name}, "message": "m"} for schema, name in references]
    return {"schema": "olm.deprecations", "package": pkg, "entries": entries}


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param(
            [package(), package(), channel(), bundle()],
            "catalog.json:2: olm.package name 'p': duplicate package (first defined at catalog.json:1)",
            id="duplicate-package",
        ),
        pytest.param(
            [{**package(), "name": ""}, *VALID[1:]],
            "catalog.json:1: olm.package: name must be set",
            id="package-without-name",
        ),
        pytest.param(
            [package(), {"schema": "olm.channel", "package": "p", "entries": []}, *VALID[1:]],
            "catalog.json:2: olm.channel package 'p': name must be set",
            id="channel-without-name",
        ),
        pytest.param(
            [*VALID, {**bundle(), "name": ""}],
            "catalog.json:4: olm.bundle package 'p': name must be set",
            id="bundle-without-name",
        ),
        pytest.param(
            [*VALID, channel()],
            "catalog.json:4: olm.channel package 'p' name 'stable': duplicate channel "
            "(first defined at catalog.json:2)",
            id="duplicate-channel",
        ),
        pytest.param(
            [*VALID, bundle()],
            "catalog.json:4: olm.bundle package 'p' name 'p.v1': duplicate bundle "
            "(first defined at catalog.json:3)",
            id="duplicate-bundle",
        ),
        pytest.param(
            [*VALID, deprecations(), deprecations()],
            "catalog.json:5: olm.deprecations package 'p': second olm.deprecations for the package "
            "(first defined at catalog.json:4)",
            id="two-deprecations",
        ),
    ],
)
def test_still_refused(tmp_path: Path, objects: list[dict[str, Any]], expected: str) -> None:
    assert problems(tmp_path, objects) == [expected]


def test_the_same_name_in_two_packages_is_no_duplicate(tmp_path: Path) -> None:
    other = [package("q"), channel(pkg="q"), bundle(pkg="q")]
    assert problems(tmp_path, [*VALID, *other]) == []


@pytest.mark.parametrize(
    "objects",
    [
        pytest.param([package(default="fast"), channel(), bundle()], id="default-channel-missing"),
        pytest.param([*VALID, channel(pkg="q")], id="channel-of-unknown-package"),
        pytest.param([*VALID, {**channel(), "package": ""}], id="channel-without-package"),
        pytest.param([package(), channel(entries=("p.v1", "p.v1")), bundle()], id="duplicate-channel-entry"),
        pytest.param([package(), channel(entries=("p.v1", "")), bundle()], id="channel-entry-without-name"),
        pytest.param(
            [package(), channel(entries=("p.v1", "p.v2", "p.v0")), bundle()], id="entry-without-bundle"
        ),
        pytest.param([*VALID, bundle(pkg="q")], id="bundle-of-unknown-package"),
        pytest.param([*VALID, bundle(name="p.v2", version="1.1.0")], id="bundle-in-no-channel"),
        pytest.param([package(), channel(), bundle(version="v1.0.0")], id="version-with-v"),
        pytest.param([package(), channel(), bundle(version="1.0")], id="version-two-parts"),
        pytest.param([package(), channel(), bundle(version="1.0.0-01")], id="prerelease-leading-zero"),
        pytest.param([package(), channel(), bundle(version=1)], id="version-number"),
        pytest.param([package(), channel(), {**bundle(), "properties": []}], id="no-package-property"),
        pytest.param(
            [package(), channel(), {**bundle(), "properties": bundle()["properties"] * 2}],
            id="two-package-properties",
        ),
        pytest.param(
            [package(), channel(), {**bundle(), "properties": bundle(pkg="q")["properties"]}],
            id="package-property-mismatch",
        ),
        pytest.param([package(), channel(), {**bundle(), "properties": "nope"}], id="wrong-shape"),
        pytest.param([*VALID, deprecations("q")], id="deprecations-of-unknown-package"),
        pytest.param([*VALID, deprecations("p", ("olm.channel", "fast"))], id="deprecated-channel-missing"),
        pytest.param([*VALID, deprecations("p", ("olm.bundle", "p.v9"))], id="deprecated-bundle-missing"),
        pytest.param([*VALID, deprecations("p", ("olm.other", "x"))], id="deprecation-of-unknown-schema"),
    ],
)
def test_served_as_upstream_catalogd_serves_it(tmp_path: Path, objects: list[dict[str, Any]]) -> None:
    assert problems(tmp_path, objects) == []


def test_valid_deprecations_and_semver_edge_cases(tmp_path: Path) -> None:
    versions = ["1.31.0-nightly-2026-08-22", "3.4.0-ea.1", "0.9.2-clusterwide", "0.17.2+0.1725901206.p"]
    bundles = [bundle(name=f"p.v{i}", version=v) for i, v in enumerate(versions)]
    notices = deprecations("p", ("olm.package", ""), ("olm.channel", "stable"), ("olm.bundle", "p.v0"))
    objects = [package(), channel(entries=tuple(b["name"] for b in bundles)), *bundles, notices]
    assert problems(tmp_path, objects) == []


def test_checked_raises_after_the_last_meta_and_lists_problems(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(
        "\n".join(json.dumps(o) for o in [package(), channel(), bundle(), bundle()])
    )
    seen: list[str] = []
    with pytest.raises(
        fbc.InvalidCatalog, match=r"invalid catalog \(1 problem\): c\.json:4: .*duplicate bundle"
    ):
        seen.extend(m.name for m in fbc.checked(fbc.iter_metas(tmp_path)))
    assert seen == ["p", "stable", "p.v1", "p.v1"]


def test_many_problems_are_summarised(tmp_path: Path) -> None:
    objects = [package(), channel(), bundle(), *[bundle() for _ in range(15)]]
    (tmp_path / "c.json").write_text("\n".join(json.dumps(o) for o in objects))
    with pytest.raises(fbc.InvalidCatalog) as raised:
        list(fbc.checked(fbc.iter_metas(tmp_path)))
    assert len(raised.value.problems) == 15
    assert str(raised.value).endswith("... and 5 more")
