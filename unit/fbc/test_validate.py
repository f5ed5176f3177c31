"""Validation rules, one case each; every problem names the file, the line and the object."""

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
            [package(default="fast"), channel(), bundle()],
            "catalog.json:1: olm.package name 'p': defaultChannel 'fast' does not exist",
            id="default-channel-missing",
        ),
        pytest.param(
            [*VALID, channel(pkg="q")],
            "catalog.json:4: olm.channel package 'q' name 'stable': package 'q' does not exist",
            id="channel-of-unknown-package",
        ),
        pytest.param(
            [*VALID, channel()],
            "catalog.json:4: olm.channel package 'p' name 'stable': duplicate channel "
            "(first defined at catalog.json:2)",
            id="duplicate-channel",
        ),
        pytest.param(
            [package(), channel(entries=("p.v1", "p.v1")), bundle()],
            "catalog.json:2: olm.channel package 'p' name 'stable': duplicate entry 'p.v1'",
            id="duplicate-channel-entry",
        ),
        pytest.param(
            [package(), channel(entries=("p.v1", "p.v2", "p.v0")), bundle()],
            "catalog.json:2: olm.channel package 'p' name 'stable': "
            "entries name bundles that do not exist: p.v0, p.v2",
            id="entry-without-bundle",
        ),
        pytest.param(
            [*VALID, bundle(pkg="q")],
            "catalog.json:4: olm.bundle package 'q' name 'p.v1': package 'q' does not exist",
            id="bundle-of-unknown-package",
        ),
        pytest.param(
            [*VALID, bundle()],
            "catalog.json:4: olm.bundle package 'p' name 'p.v1': duplicate bundle "
            "(first defined at catalog.json:3)",
            id="duplicate-bundle",
        ),
        pytest.param(
            [*VALID, bundle(name="p.v2", version="1.1.0")],
            "catalog.json:4: olm.bundle package 'p' name 'p.v2': the bundle is not an entry of any channel",
            id="bundle-in-no-channel",
        ),
        pytest.param(
            [package(), channel(), bundle(version="v1.0.0")],
            "catalog.json:3: olm.bundle package 'p' name 'p.v1': version 'v1.0.0' is not a semantic version",
            id="version-with-v",
        ),
        pytest.param(
            [package(), channel(), bundle(version="1.0")],
            "version '1.0' is not a semantic version",
            id="version-two-parts",
        ),
        pytest.param(
            [package(), channel(), bundle(version="1.0.0-01")],
            "version '1.0.0-01' is not a semantic version",
            id="prerelease-leading-zero",
        ),
        pytest.param(
            [package(), channel(), bundle(version=1)],
            "version 1 is not a semantic version",
            id="version-number",
        ),
        pytest.param(
            [package(), channel(), {**bundle(), "properties": []}],
            "must have exactly one 'olm.package' property, found 0",
            id="no-package-property",
        ),
        pytest.param(
            [package(), channel(), {**bundle(), "properties": bundle()["properties"] * 2}],
            "must have exactly one 'olm.package' property, found 2",
            id="two-package-properties",
        ),
        pytest.param(
            [package(), channel(), {**bundle(), "properties": bundle(pkg="q")["properties"]}],
            "'olm.package' property names package 'q'",
            id="package-property-mismatch",
        ),
        pytest.param(
            [package(), channel(), {**bundle(), "properties": "nope"}],
            "catalog.json:3: olm.bundle package 'p' name 'p.v1': properties: Input should be a valid",
            id="wrong-shape",
        ),
        pytest.param(
            [*VALID, {"schema": "olm.deprecations", "package": "q", "entries": []}],
            "catalog.json:4: olm.deprecations package 'q': package 'q' does not exist",
            id="deprecations-of-unknown-package",
        ),
        pytest.param(
            [
                *VALID,
                {
                    "schema": "olm.deprecations",
                    "package": "p",
                    "entries": [{"reference": {"schema": "olm.channel", "name": "fast"}, "message": "m"}],
                },
            ],
            "references olm.channel 'fast', which does not exist",
            id="deprecated-channel-missing",
        ),
        pytest.param(
            [
                *VALID,
                {
                    "schema": "olm.deprecations",
                    "package": "p",
                    "entries": [{"reference": {"schema": "olm.bundle", "name": "p.v9"}, "message": "m"}],
                },
            ],
            "references olm.bundle 'p.v9', which does not exist",
            id="deprecated-bundle-missing",
        ),
        pytest.param(
            [*VALID, *[{"schema": "olm.deprecations", "package": "p", "entries": []}] * 2],
            "catalog.json:5: olm.deprecations package 'p': second olm.deprecations for the package",
            id="two-deprecations",
        ),
    ],
)
def test_rules(tmp_path: Path, objects: list[dict[str, Any]], expected: str) -> None:
    found = problems(tmp_path, objects)
    assert any(expected in problem for problem in found), found


def test_valid_deprecations_and_semver_edge_cases(tmp_path: Path) -> None:
    versions = ["1.31.0-nightly-2026-08-22", "3.4.0-ea.1", "0.9.2-clusterwide", "0.17.2+0.1725901206.p"]
    bundles = [bundle(name=f"p.v{i}", version=v) for i, v in enumerate(versions)]
    deprecations = {
        "schema": "olm.deprecations",
        "package": "p",
        "entries": [
            {"reference": {"schema": "olm.package"}, "message": "end of life"},
            {"reference": {"schema": "olm.channel", "name": "stable"}, "message": "use fast"},
            {"reference": {"schema": "olm.bundle", "name": "p.v0"}, "message": "broken"},
        ],
    }
    objects = [package(), channel(entries=tuple(b["name"] for b in bundles)), *bundles, deprecations]
    assert problems(tmp_path, objects) == []


def test_checked_raises_after_the_last_meta_and_lists_problems(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(
        "\n".join(json.dumps(o) for o in [package(default="x"), channel(), bundle()])
    )
    seen: list[str] = []
    with pytest.raises(
        fbc.InvalidCatalog, match=r"invalid catalog \(1 problem\): c\.json:1: .*'x' does not exist"
    ):
        seen.extend(m.name for m in fbc.checked(fbc.iter_metas(tmp_path)))
    assert seen == ["p", "stable", "p.v1"]


def test_many_problems_are_summarised(tmp_path: Path) -> None:
    objects = [package(), channel(), bundle(), *[bundle(name=f"x{i}", pkg="q") for i in range(15)]]
    (tmp_path / "c.json").write_text("\n".join(json.dumps(o) for o in objects))
    with pytest.raises(fbc.InvalidCatalog) as raised:
        list(fbc.checked(fbc.iter_metas(tmp_path)))
    assert len(raised.value.problems) == 15
    assert str(raised.value).endswith("... and 5 more")
