"""The FBC that `olm_testkit.olmv0` writes for v0, checked with opm itself: each bundle is what
`opm render` makes of the same bundle directory (apart from the image, left empty so that opm serves
the manifests inline), and the catalog passes `opm validate`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from olm_testkit import olmv0
from olm_testkit.images import realdata
from olm_testkit.olmv0 import fbc

BUNDLES = (
    pytest.param("kube-green", "0.7.1", id="webhook"),
    pytest.param("cat-facts-operator", "1.0.0", id="own-namespace"),
    pytest.param("etcd", "0.9.2-clusterwide", id="prerelease-version"),
    pytest.param("argocd-operator", "0.7.0", id="csv-declared-properties"),
    pytest.param("prometheus", "0.56.3", id="bare-equals-in-a-crd"),
)


def opm_render(opm: Path, bundle_dir: Path) -> dict[str, Any]:
    result = subprocess.run(
        [str(opm), "render", str(bundle_dir), "--output=json"], capture_output=True, text=True, check=True
    )
    blob: dict[str, Any] = json.loads(result.stdout)
    return blob


@pytest.mark.parametrize(("package", "version"), BUNDLES)
def test_a_bundle_is_what_opm_render_writes_but_for_its_image(
    test_tool_binaries: Path, package: str, version: str
) -> None:
    bundle_dir = realdata.real_bundle(package, version)
    image = f"registry.invalid/{package}:{version}"

    (ours,) = [
        blob
        for blob in fbc.package_blobs(olmv0.real_package(package, [version], images={version: image}))
        if blob["schema"] == "olm.bundle"
    ]
    theirs = opm_render(test_tool_binaries / "opm", bundle_dir)

    assert ours["image"] == ""
    assert ours["properties"] == theirs["properties"]
    assert [p["type"] for p in ours["properties"]].count("olm.bundle.object") == len(
        list((bundle_dir / "manifests").iterdir())
    )
    # opm render of the bundle image would list the image itself among the related images.
    theirs_with_image = sorted(
        [*theirs["relatedImages"], {"name": "", "image": image}], key=lambda r: r["image"]
    )
    assert ours["relatedImages"] == theirs_with_image
    assert {k: ours[k] for k in ("schema", "name", "package")} == {
        k: theirs[k] for k in ("schema", "name", "package")
    }


def test_a_catalog_of_several_packages_passes_opm_validate(test_tool_binaries: Path, tmp_path: Path) -> None:
    directory = olmv0.write_catalog(
        tmp_path,
        [
            olmv0.real_package("etcd"),
            olmv0.real_package("cat-facts-operator"),
            olmv0.real_package("kube-green"),
        ],
    )

    olmv0.validate(test_tool_binaries / "opm", directory)
    blobs = [json.loads(line) for line in (directory / "etcd" / "catalog.json").read_text().splitlines()]
    package = blobs[0]
    channels = {blob["name"]: blob["entries"] for blob in blobs if blob["schema"] == "olm.channel"}
    assert package == {"schema": "olm.package", "name": "etcd", "defaultChannel": "singlenamespace-alpha"}
    assert channels["singlenamespace-alpha"] == [
        {"name": "etcdoperator.v0.9.0"},
        {"name": "etcdoperator.v0.9.2", "replaces": "etcdoperator.v0.9.0"},
        {"name": "etcdoperator.v0.9.4", "replaces": "etcdoperator.v0.9.2"},
    ]
    assert [e["name"] for e in channels["clusterwide-alpha"]] == [
        "etcdoperator.v0.9.0",
        "etcdoperator.v0.9.2-clusterwide",
        "etcdoperator.v0.9.4-clusterwide",
    ]


def test_the_default_channel_is_the_newest_one_a_bundle_names() -> None:
    package = olmv0.real_package("cat-facts-operator", ["1.1.2", "1.0.0"])

    blobs = fbc.package_blobs(package)

    # 1.1.2 (in `alpha`) names no default channel; 1.0.0 names `stable`, its own.
    assert blobs[0]["defaultChannel"] == "stable"
    assert sorted(blob["name"] for blob in blobs if blob["schema"] == "olm.channel") == ["alpha", "stable"]


def test_bundles_of_two_packages_are_not_one_package() -> None:
    mixed = olmv0.CatalogPackage(
        bundles=(
            *olmv0.real_package("cat-facts-operator", ["1.0.0"]).bundles,
            *olmv0.real_package("etcd", ["0.9.2"]).bundles,
        )
    )

    with pytest.raises(olmv0.CatalogError, match="one package at a time"):
        fbc.package_blobs(mixed)
